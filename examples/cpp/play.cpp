/* play FILE.cfa [OTHER.cfa]: the C++ version of examples/c/play.c (same output and both
 * checksums: the poses, then two clips blended and a small mesh skinned through the jobs), with
 * the handle owned by a small RAII class, arrays in std::vector and errors as exceptions.
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
    cf_clip get() const { return clip_; }
    void sample_pose(float t, std::vector<float>& rot, std::vector<float>& tra,
                     std::vector<float>& sca) const {
        check(cf_clip_sample_pose(clip_, t, CF_LOOPING_CLAMP, rot.data(), rot.size(), tra.data(),
                                  tra.size(), sca.data(), sca.size()));
    }

private:
    cf_clip clip_{0};
};

uint64_t fnv1a(uint64_t h, const float* v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float f = v[i];
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        for (int k = 0; k < 4; k++) {
            h ^= (bits >> (8 * k)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

uint64_t fnv1a(uint64_t h, const std::vector<float>& v) { return fnv1a(h, v.data(), v.size()); }

// 16 floats, 16-byte aligned: a pose bone (x y z w) or a matrix column's worth of alignment.
struct alignas(16) F4 {
    float v[4];
};

// A pose the jobs read and write in place (cf_pose: 16-byte-aligned arrays of 4 floats a bone).
struct Pose {
    explicit Pose(size_t n) : r(n), t(n), s(n) {}
    cf_pose c() { return cf_pose{r.data()->v, t.data()->v, s.data()->v, r.size()}; }
    std::vector<F4> r, t, s;
};

enum { VERTS_PER_BONE = 4, INFLUENCES = 2 };

// A clip's sampler (a character's decoding state, kept between frames), owned like Clip.
class Sampler {
public:
    explicit Sampler(const Clip& clip) { check(cf_sampler_create(clip.get(), &sampler_)); }
    ~Sampler() {
        if (sampler_.id != 0) cf_sampler_free(sampler_);
    }
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;
    cf_sampler get() const { return sampler_; }

private:
    cf_sampler sampler_{0};
};

// blend_and_skin of examples/c/play.c, step for step.
uint64_t blend_and_skin(const Clip& a, const Clip& b, uint32_t frames) {
    const size_t n = a.num_bones(), nv = n * VERTS_PER_BONE;
    Pose pa(n), pb(n), rest(n), blended(n), object(n);
    const Sampler sampler(a);  // FILE plays through it: cf_clip_sample_into's poses
    std::vector<uint32_t> parents(n);
    check(cf_clip_parents(a.get(), parents.data(), n));
    check(cf_clip_bind_pose(a.get(), pa.c()));  // FILE's defaults, once; frames skip them
    check(cf_clip_bind_pose(a.get(), rest.c()));
    std::vector<F4> inv_bind(4 * n), palette(4 * n);  // identity: the mesh is in bone space
    for (size_t j = 0; j < n; j++)
        for (int k = 0; k < 4; k++) inv_bind[4 * j + k].v[k] = 1.0f;
    std::vector<float> bone_w(n), pos(3 * nv), nor(3 * nv), out_pos(3 * nv), out_nor(3 * nv),
        weights(INFLUENCES * nv);
    std::vector<uint16_t> joints(INFLUENCES * nv);
    for (size_t j = 0; j < n; j++) bone_w[j] = (j % 2) ? 1.0f : 0.5f;
    for (size_t v = 0; v < nv; v++) {
        size_t bone = v / VERTS_PER_BONE, k = v % VERTS_PER_BONE;
        pos[3 * v] = float(k);
        pos[3 * v + 1] = float(bone % 7) * 0.5f;
        pos[3 * v + 2] = -float(k) * 0.25f;
        nor[3 * v] = (k & 1) ? 1.0f : 0.0f;
        nor[3 * v + 1] = (k & 1) ? 0.0f : 1.0f;
        joints[INFLUENCES * v] = uint16_t(bone);
        joints[INFLUENCES * v + 1] =
            uint16_t(parents[bone] == CF_NO_PARENT ? bone : parents[bone]);
        weights[INFLUENCES * v] = 0.75f;
        weights[INFLUENCES * v + 1] = 0.25f;
    }
    cf_blend_layer layers[2] = {{pa.c(), 1.0f, nullptr, 0}, {pb.c(), 0.0f, bone_w.data(), n}};
    const cf_blend_job blend{layers, 2, nullptr, 0, rest.c(), 0.1f, blended.c()};
    const cf_local_to_object_job l2o{parents.data(), n, blended.c(), 0, n, object.c(), CF_SIMD_AUTO};
    const cf_skinning_palette_job pal{object.c(), inv_bind.data()->v, n, nullptr, 0,
                                      CF_PALETTE_4X4, palette.data()->v, n};
    const cf_skin_job skin{palette.data()->v, n, INFLUENCES, joints.data(), joints.size(),
                           weights.data(), weights.size(), pos.data(), nv, nor.data(), nv,
                           out_pos.data(), nv, out_nor.data(), nv, CF_SIMD_AUTO};
    const float duration_b = b.duration();
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < frames; i++) {
        const float t = float(i) / 60.0f, w = float(i) / float(frames);
        layers[0].weight = 1.0f - w;
        layers[1].weight = w;
        check(cf_sampler_sample_into(sampler.get(), t, CF_LOOPING_CLAMP, CF_DEFAULTS_SKIP, pa.c()));
        check(cf_clip_sample_into(b.get(), t + 0.5f * duration_b, CF_LOOPING_WRAP,
                                  CF_DEFAULTS_WRITE, pb.c()));
        check(cf_blend_run(&blend));
        check(cf_local_to_object_run(&l2o));
        check(cf_skinning_palette_run(&pal));
        check(cf_skin_run(&skin));
        h = fnv1a(fnv1a(h, out_pos), out_nor);
    }
    return h;
}

std::vector<uint8_t> read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: play FILE.cfa [OTHER.cfa]\n");
        return 2;
    }
    const char* path = argv[1];
    const char* other = argc == 3 ? argv[2] : argv[1];
    try {
        Clip clip(read_file(path));
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
        path = other;  // what a failure from here on is about
        const Clip clip_b(read_file(other));
        const uint64_t hs = blend_and_skin(clip, clip_b, frames);
        std::printf("skinned %" PRIu32 " vertices checksum %016" PRIx64 "\n",
                    bones * uint32_t(VERTS_PER_BONE), hs);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "play: %s: %s\n", path, e.what());
        return 1;
    }
    return 0;
}
