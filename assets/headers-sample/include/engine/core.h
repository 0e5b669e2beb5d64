// The engine's umbrella header: pulls in config, logging and maths for everyone.
#pragma once
#include "config.h"
#include "log.h"
#include "math.h"

namespace engine {

using EntityId = unsigned;

struct Transform {
    Vec3 position;
    Quat rotation;
    Vec3 scale;
};

class World {
public:
    EntityId spawn(const Transform &t);
    void despawn(EntityId id);
    Transform &transform(EntityId id);
    unsigned count() const;

private:
    Transform transforms_[ENGINE_MAX_ENTITIES];
    unsigned count_ = 0;
};

} // namespace engine
