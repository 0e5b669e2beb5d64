// Rendering front end; the backend header depends on the build (see the defines).
#pragma once
#include "core.h"
#include "math.h"
#if defined(ENGINE_GL)
#include "gl_backend.h"
#else
#include "soft_backend.h"
#endif

namespace engine {

struct Camera {
    Vec3 eye, target;
    float fov_y;
};

struct Mesh {
    unsigned vertex_count;
    const Vec3 *vertices;
};

void render_begin(const Camera &camera);
void render_mesh(const Mesh &mesh, const Transform &t);
void render_end();

} // namespace engine
