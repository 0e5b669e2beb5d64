// Rendering front end implementation.
#include <engine/render.h>

namespace engine {

static Camera current;

void render_begin(const Camera &camera) { current = camera; }

void render_mesh(const Mesh &mesh, const Transform &t) {
    for (unsigned i = 0; i < mesh.vertex_count; ++i) {
        Vec3 v = rotate(t.rotation, mesh.vertices[i]) + t.position;
        (void)v;
    }
}

void render_end() { ENGINE_LOG(Trace, "render", "frame done"); }

} // namespace engine
