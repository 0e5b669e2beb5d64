/* play FILE.cfa [OTHER.cfa]: loads a ClipForge clip through the C API, plays it at 60 Hz for
 * its whole length (clamped) and prints a checksum of every sampled pose: FNV-1a 64 over the
 * bits of the floats, per frame rotations (x, y, z, w per bone), then translations, then scales
 * (x, y, z). A bad file prints the error and exits with status 1.
 *
 * Then, per frame, what an engine runs for a character (blend_and_skin below): FILE sampled
 * through a cf_sampler (the character's decoding state, kept between frames) with
 * CF_DEFAULTS_SKIP onto its bind pose, OTHER (same skeleton; FILE itself when not given)
 * half its length later, the two blended with weights moving from FILE to OTHER over the clip
 * (OTHER weighted per bone), local -> object space, the skinning palette, and a small mesh
 * (4 vertices per bone, 2 influences each) skinned; it prints the FNV-1a 64 of every skinned
 * position and normal.
 *
 * Build (docs/RUNTIME.md, "Building and linking from C/C++"):
 *   cargo build --release -p clipforge-runtime-capi
 *   cc -std=c99 -I crates/runtime-capi/include examples/c/play.c \
 *      target/release/libclipforge_runtime_capi.a -lpthread -ldl -lm -o play */
#include "clipforge_runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a_floats(uint64_t h, const float *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        for (int k = 0; k < 4; k++) {
            h ^= (bits >> (8 * k)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Reads a whole file; NULL (errno set) on failure. */
static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        uint8_t *bigger = realloc(buf, cap * 2);
        if (!bigger) { free(buf); buf = NULL; errno = ENOMEM; break; }
        buf = bigger;
        cap *= 2;
    }
    if (buf && ferror(f)) { free(buf); buf = NULL; errno = EIO; }
    fclose(f);
    *size = len;
    return buf;
}

/* A 16-byte-aligned block of n floats (what cf_pose arrays and matrices need; C99 has no
 * aligned_alloc): *raw is what to free. */
static float *alloc16(size_t n, void **raw) {
    *raw = malloc(n * sizeof(float) + 15);
    if (!*raw) return NULL;
    return (float *)(((uintptr_t)*raw + 15) & ~(uintptr_t)15);
}

/* Prints a failed call's status and details and returns 1. */
static int fail(const char *path, cf_status status) {
    char detail[512];
    cf_last_error(detail, sizeof detail);
    fprintf(stderr, "play: %s: %s (%s)\n", path, cf_error_message(status), detail);
    return 1;
}

/* Loads a clip; 0 or the status of the failure (printed). */
static cf_status load(const char *path, cf_clip *clip) {
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "play: %s: %s\n", path, strerror(errno));
        return CF_ERR_NOT_FOUND;
    }
    cf_status st = cf_clip_create(data, size, clip);
    free(data); /* the library keeps its own copy */
    if (st != CF_OK) fail(path, st);
    return st;
}

enum { VERTS_PER_BONE = 4, INFLUENCES = 2, LAYERS = 2 };

/* The per-frame character update of the header comment; the checksum goes to *h. */
static cf_status blend_and_skin(cf_clip a, cf_clip b, uint32_t bones, uint32_t frames,
                                float duration_b, uint64_t *h) {
    size_t n = bones, nv = n * VERTS_PER_BONE;
    /* Every float array in one list, so one loop allocates and frees them. */
    enum { POSE_A, POSE_B, REST, BLENDED, OBJECT, PALETTE, INV_BIND, POS, NOR, OUT_POS, OUT_NOR,
           BONE_W, WEIGHTS, ARRAYS };
    size_t len[ARRAYS] = {12 * n, 12 * n, 12 * n, 12 * n, 12 * n, 16 * n, 16 * n, 3 * nv, 3 * nv,
                          3 * nv, 3 * nv, n, INFLUENCES * nv};
    float *f[ARRAYS];
    void *raw[ARRAYS] = {0};
    uint32_t *parents = malloc((n + 1) * sizeof *parents);
    uint16_t *joints = malloc((INFLUENCES * nv + 1) * sizeof *joints);
    int ok = parents && joints;
    for (int i = 0; i < ARRAYS; i++) ok = (f[i] = alloc16(len[i] + 1, &raw[i])) && ok;
    cf_status st = ok ? CF_OK : CF_ERR_OUT_OF_MEMORY;
    cf_pose pose[5];
    for (int i = 0; i < 5; i++) {
        float *p = ok ? f[POSE_A + i] : NULL;
        pose[i].rotations = p;
        pose[i].translations = p ? p + 4 * n : NULL;
        pose[i].scales = p ? p + 8 * n : NULL;
        pose[i].num_bones = n;
    }
    /* FILE plays through a sampler: the same poses as cf_clip_sample_into, less work a frame. */
    cf_sampler sampler = {0};
    if (st == CF_OK) st = cf_sampler_create(a, &sampler);
    if (st == CF_OK) st = cf_clip_parents(a, parents, n);
    /* FILE's default sub-tracks are written once, here; each frame then skips them. */
    if (st == CF_OK) st = cf_clip_bind_pose(a, pose[POSE_A]);
    if (st == CF_OK) st = cf_clip_bind_pose(a, pose[REST]);
    if (st == CF_OK) {
        /* Identity inverse bind matrices: the mesh is given in each bone's own space. */
        memset(f[INV_BIND], 0, 16 * n * sizeof(float));
        for (size_t j = 0; j < n; j++)
            for (int k = 0; k < 4; k++) f[INV_BIND][16 * j + 5 * k] = 1.0f;
        for (size_t j = 0; j < n; j++) f[BONE_W][j] = (j % 2) ? 1.0f : 0.5f;
        for (size_t v = 0; v < nv; v++) {
            size_t bone = v / VERTS_PER_BONE, k = v % VERTS_PER_BONE;
            float *p = &f[POS][3 * v], *q = &f[NOR][3 * v];
            p[0] = (float)k;
            p[1] = (float)(bone % 7) * 0.5f;
            p[2] = -(float)k * 0.25f;
            q[0] = (k & 1) ? 1.0f : 0.0f;
            q[1] = (k & 1) ? 0.0f : 1.0f;
            q[2] = 0.0f;
            joints[INFLUENCES * v] = (uint16_t)bone;
            joints[INFLUENCES * v + 1] =
                (uint16_t)(parents[bone] == CF_NO_PARENT ? bone : parents[bone]);
            f[WEIGHTS][INFLUENCES * v] = 0.75f;
            f[WEIGHTS][INFLUENCES * v + 1] = 0.25f;
        }
    }
    cf_blend_layer layers[LAYERS] = {{pose[POSE_A], 1.0f, NULL, 0},
                                     {pose[POSE_B], 0.0f, f[BONE_W], n}};
    cf_blend_job blend = {layers, LAYERS, NULL, 0, pose[REST], 0.1f, pose[BLENDED]};
    cf_local_to_object_job l2o = {parents, n, pose[BLENDED], 0, n, pose[OBJECT], CF_SIMD_AUTO};
    cf_skinning_palette_job palette = {pose[OBJECT], f[INV_BIND], n, NULL, 0, CF_PALETTE_4X4,
                                       f[PALETTE], n};
    cf_skin_job skin = {f[PALETTE], n,  INFLUENCES, joints,     INFLUENCES * nv,
                        f[WEIGHTS], INFLUENCES * nv, f[POS], nv, f[NOR], nv, f[OUT_POS], nv,
                        f[OUT_NOR], nv, CF_SIMD_AUTO};
    for (uint32_t i = 0; i < frames && st == CF_OK; i++) {
        float t = (float)i / 60.0f, w = (float)i / (float)frames;
        layers[0].weight = 1.0f - w;
        layers[1].weight = w;
        if ((st = cf_sampler_sample_into(sampler, t, CF_LOOPING_CLAMP, CF_DEFAULTS_SKIP,
                                         pose[POSE_A])) ||
            (st = cf_clip_sample_into(b, t + 0.5f * duration_b, CF_LOOPING_WRAP,
                                      CF_DEFAULTS_WRITE, pose[POSE_B])) ||
            (st = cf_blend_run(&blend)) || (st = cf_local_to_object_run(&l2o)) ||
            (st = cf_skinning_palette_run(&palette)) || (st = cf_skin_run(&skin)))
            break;
        *h = fnv1a_floats(*h, f[OUT_POS], 3 * nv);
        *h = fnv1a_floats(*h, f[OUT_NOR], 3 * nv);
    }
    if (sampler.id != 0) cf_sampler_free(sampler);
    for (int i = 0; i < ARRAYS; i++) free(raw[i]);
    free(parents);
    free(joints);
    return st;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: play FILE.cfa [OTHER.cfa]\n");
        return 2;
    }
    const char *path = argv[1], *other = argc == 3 ? argv[2] : argv[1];
    cf_clip clip, clip_b;
    cf_status st = load(path, &clip);
    if (st != CF_OK) return 1;
    if (load(other, &clip_b) != CF_OK) {
        cf_clip_free(clip);
        return 1;
    }

    uint32_t bones = 0, samples = 0;
    float duration = 0.0f, rate = 0.0f;
    if ((st = cf_clip_num_bones(clip, &bones)) != CF_OK ||
        (st = cf_clip_num_samples(clip, &samples)) != CF_OK ||
        (st = cf_clip_sample_rate(clip, &rate)) != CF_OK ||
        (st = cf_clip_duration(clip, &duration)) != CF_OK) {
        cf_clip_free(clip);
        cf_clip_free(clip_b);
        return fail(path, st);
    }
    char root[64] = "";
    size_t root_len = 0;
    if (bones > 0) cf_clip_bone_name(clip, 0, root, sizeof root, &root_len);

    size_t nr = 4 * (size_t)bones, nt = 3 * (size_t)bones;
    float *rot = malloc((nr + 1) * sizeof *rot);
    float *tra = malloc((nt + 1) * sizeof *tra);
    float *sca = malloc((nt + 1) * sizeof *sca);
    if (!rot || !tra || !sca) {
        fprintf(stderr, "play: out of memory\n");
        cf_clip_free(clip);
        cf_clip_free(clip_b);
        return 1;
    }
    uint32_t frames = (uint32_t)(duration * 60.0f) + 1;
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < frames; i++) {
        float t = (float)i / 60.0f;
        st = cf_clip_sample_pose(clip, t, CF_LOOPING_CLAMP, rot, nr, tra, nt, sca, nt);
        if (st != CF_OK) {
            cf_clip_free(clip);
            cf_clip_free(clip_b);
            return fail(path, st);
        }
        h = fnv1a_floats(h, rot, nr);
        h = fnv1a_floats(h, tra, nt);
        h = fnv1a_floats(h, sca, nt);
    }
    printf("%s: %" PRIu32 " bones (root \"%s\"), %" PRIu32 " samples at %g Hz, %g s\n", path,
           bones, root, samples, rate, duration);
    printf("frames %" PRIu32 " checksum %016" PRIx64 "\n", frames, h);
    free(rot);
    free(tra);
    free(sca);

    float duration_b = 0.0f;
    uint64_t hs = 0xcbf29ce484222325ull;
    if ((st = cf_clip_duration(clip_b, &duration_b)) != CF_OK ||
        (st = blend_and_skin(clip, clip_b, bones, frames, duration_b, &hs)) != CF_OK) {
        cf_clip_free(clip);
        cf_clip_free(clip_b);
        return fail(other, st);
    }
    printf("skinned %" PRIu32 " vertices checksum %016" PRIx64 "\n", bones * VERTS_PER_BONE,
           hs);
    return cf_clip_free(clip) == CF_OK && cf_clip_free(clip_b) == CF_OK ? 0 : 1;
}
