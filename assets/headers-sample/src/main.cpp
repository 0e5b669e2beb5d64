// The game: ties every subsystem together.
#include <engine/core.h>
#include <engine/render.h>
#include <engine/audio.h>

int main() {
    engine::World world;
    engine::Camera camera{{0, 2, -5}, {0, 0, 0}, 60.0f};
    auto player = world.spawn({{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}});
    for (int frame = 0; frame < 3; ++frame) {
        engine::render_begin(camera);
        engine::render_end();
        engine::audio_update(world.transform(player));
    }
    ENGINE_LOG(Info, "main", "bye");
    return 0;
}
