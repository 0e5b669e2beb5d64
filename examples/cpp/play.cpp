/* play FILE.cfa: the C++ version of examples/c/play.c (same output and checksum), with the
 * handle owned by a small RAII class and errors as exceptions.
 *
 * Build (docs/RUNTIME.md, "Building and linking from C/C++"):
 *   cargo build --release -p clipforge-runtime-capi
 *   c++ -std=c++17 -I crates/runtime-capi/include examples/cpp/play.cpp \
 *       target/release/libclipforge_runtime_capi.a -lpthread -ldl -lm -o play */
#include "clipforge_runtime.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A failed call: the status's message and the call's details.
std::runtime_error error(cf_status status) {
    std::string detail(cf_last_error(nullptr, 0), '\0');
    cf_last_error(&detail[0], detail.size() + 1);
    return std::runtime_error(std::string(cf_error_message(status)) + " (" + detail + ")");
}

void check(cf_status status) {
    if (status != CF_OK) throw error(status);
}

// Owns a cf_clip; movable, not copyable.
class Clip {
public:
    explicit Clip(const std::vector<uint8_t>& bytes) {
        check(cf_clip_create(bytes.data(), bytes.size(), &clip_));
    }
    Clip(const Clip&) = delete;
    Clip& operator=(const Clip&) = delete;
    Clip(Clip&& o) noexcept : clip_(o.clip_) { o.clip_ = cf_clip{0}; }
    ~Clip() {
        if (clip_.id != 0) cf_clip_free(clip_);
    }

    uint32_t num_bones() const { uint32_t n = 0; check(cf_clip_num_bones(clip_, &n)); return n; }
    uint32_t num_samples() const { uint32_t n = 0; check(cf_clip_num_samples(clip_, &n)); return n; }
    float sample_rate() const { float v = 0; check(cf_clip_sample_rate(clip_, &v)); return v; }
    float duration() const { float v = 0; check(cf_clip_duration(clip_, &v)); return v; }
    std::string bone_name(uint32_t bone) const {
        size_t len = 0;
        check(cf_clip_bone_name(clip_, bone, nullptr, 0, &len));
        std::string name(len, '\0');
        check(cf_clip_bone_name(clip_, bone, &name[0], len + 1, &len));
        return name;
    }
    void sample_pose(float t, std::vector<float>& rot, std::vector<float>& tra,
                     std::vector<float>& sca) const {
        check(cf_clip_sample_pose(clip_, t, CF_LOOPING_CLAMP, rot.data(), rot.size(), tra.data(),
                                  tra.size(), sca.data(), sca.size()));
    }

private:
    cf_clip clip_{0};
};

uint64_t fnv1a(uint64_t h, const std::vector<float>& v) {
    for (float f : v) {
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        for (int k = 0; k < 4; k++) {
            h ^= (bits >> (8 * k)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: play FILE.cfa\n");
        return 2;
    }
    const char* path = argv[1];
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        Clip clip(bytes);
        const uint32_t bones = clip.num_bones();
        const float duration = clip.duration();
        std::vector<float> rot(4 * size_t(bones)), tra(3 * size_t(bones)), sca(3 * size_t(bones));
        const uint32_t frames = uint32_t(duration * 60.0f) + 1;
        uint64_t h = 0xcbf29ce484222325ull;
        for (uint32_t i = 0; i < frames; i++) {
            clip.sample_pose(float(i) / 60.0f, rot, tra, sca);
            h = fnv1a(fnv1a(fnv1a(h, rot), tra), sca);
        }
        std::printf("%s: %" PRIu32 " bones (root \"%s\"), %" PRIu32 " samples at %g Hz, %g s\n",
                    path, bones, bones ? clip.bone_name(0).c_str() : "", clip.num_samples(),
                    clip.sample_rate(), duration);
        std::printf("frames %" PRIu32 " checksum %016" PRIx64 "\n", frames, h);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "play: %s: %s\n", path, e.what());
        return 1;
    }
    return 0;
}
