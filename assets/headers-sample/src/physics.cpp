// Physics step: needs the world and the maths only.
#include <engine/core.h>
#include <engine/math.h>

namespace engine {

void physics_step(World &world, float dt) {
    for (EntityId id = 0; id < world.count(); ++id) {
        Transform &t = world.transform(id);
        t.position = t.position + Vec3{0, -9.81f, 0} * dt;
    }
}

} // namespace engine
