// OpenGL render backend (ENGINE_GL builds).
#pragma once
#include "math.h"

namespace engine::gl {

struct Buffer { unsigned id; unsigned size; };
struct Program { unsigned id; };

Buffer create_buffer(const void *data, unsigned size);
Program create_program(const char *vs, const char *fs);
void draw(const Program &p, const Buffer &vertices, const Mat4 &mvp);

} // namespace engine::gl
