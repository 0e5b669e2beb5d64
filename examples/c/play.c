/* play FILE.cfa: loads a ClipForge clip through the C API, plays it at 60 Hz for its whole
 * length (clamped) and prints a checksum of every sampled pose: FNV-1a 64 over the bits of the
 * floats, per frame rotations (x, y, z, w per bone), then translations, then scales (x, y, z).
 * A bad file prints the error and exits with status 1.
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

/* Prints a failed call's status and details and returns 1. */
static int fail(const char *path, cf_status status) {
    char detail[512];
    cf_last_error(detail, sizeof detail);
    fprintf(stderr, "play: %s: %s (%s)\n", path, cf_error_message(status), detail);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: play FILE.cfa\n");
        return 2;
    }
    const char *path = argv[1];
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "play: %s: %s\n", path, strerror(errno));
        return 1;
    }
    cf_clip clip;
    cf_status st = cf_clip_create(data, size, &clip);
    free(data); /* the library keeps its own copy */
    if (st != CF_OK) return fail(path, st);

    uint32_t bones = 0, samples = 0;
    float duration = 0.0f, rate = 0.0f;
    if ((st = cf_clip_num_bones(clip, &bones)) != CF_OK ||
        (st = cf_clip_num_samples(clip, &samples)) != CF_OK ||
        (st = cf_clip_sample_rate(clip, &rate)) != CF_OK ||
        (st = cf_clip_duration(clip, &duration)) != CF_OK) {
        cf_clip_free(clip);
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
        return 1;
    }
    uint32_t frames = (uint32_t)(duration * 60.0f) + 1;
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < frames; i++) {
        float t = (float)i / 60.0f;
        st = cf_clip_sample_pose(clip, t, CF_LOOPING_CLAMP, rot, nr, tra, nt, sca, nt);
        if (st != CF_OK) {
            cf_clip_free(clip);
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
    return cf_clip_free(clip) == CF_OK ? 0 : 1;
}
