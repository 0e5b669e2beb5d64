// Audio mixer implementation; version.h is written by the build (missing in a fresh tree).
#include <engine/audio.h>
#include "generated/version.h"

namespace engine {

Sound sound_load(const char *path) {
    ENGINE_LOG(Debug, "audio", path);
    return {1, 1.0f};
}

void sound_play(Sound, Vec3) {}

void audio_update(const Transform &) {}

} // namespace engine
