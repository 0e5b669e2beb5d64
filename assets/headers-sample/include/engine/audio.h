// Audio mixer interface.
#pragma once
#include "core.h"

namespace engine {

struct Sound { unsigned id; float volume; };

Sound sound_load(const char *path);
void sound_play(Sound s, Vec3 where);
void audio_update(const Transform &listener);

} // namespace engine
