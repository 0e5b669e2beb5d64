// Software rasteriser backend (builds without ENGINE_GL).
#pragma once
#include "math.h"

namespace engine::soft {

struct Framebuffer {
    unsigned width, height;
    unsigned *pixels;
};

void clear(Framebuffer &fb, unsigned rgba);
void triangle(Framebuffer &fb, Vec3 a, Vec3 b, Vec3 c, unsigned rgba);
void present(const Framebuffer &fb);

} // namespace engine::soft
