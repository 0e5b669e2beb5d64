// ClipForge anchor benchmark: ozz-animation 0.16 runtime jobs, timed the way README.md (beside this
// file) specifies, so that ClipForge's own jobs can be timed the same way in the same run.
//
// Written for ClipForge. Only ozz's public headers are used; ozz's .cc files are compiled in place
// from the shared anchors-src snapshot (see scripts/bench_ozz.sh and Makefile).
//
// Usage: ozz_bench [--clips LIST.tsv] [--fox FOX.cfmesh] [--only clips,l2m,skin,xform] [--quick]
//   LIST.tsv: one clip per line, "name<TAB>path.cfanim".
// Output: TSV on stdout (header first); progress and summaries on stderr.

#include <x86intrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "ozz/animation/offline/animation_builder.h"
#include "ozz/animation/offline/animation_optimizer.h"
#include "ozz/animation/offline/raw_animation.h"
#include "ozz/animation/offline/raw_skeleton.h"
#include "ozz/animation/offline/skeleton_builder.h"
#include "ozz/animation/runtime/animation.h"
#include "ozz/animation/runtime/local_to_model_job.h"
#include "ozz/animation/runtime/sampling_job.h"
#include "ozz/animation/runtime/skeleton.h"
#include "ozz/base/io/archive.h"
#include "ozz/base/io/stream.h"
#include "ozz/base/maths/simd_math.h"
#include "ozz/base/maths/soa_transform.h"
#include "ozz/base/memory/allocator.h"
#include "ozz/base/memory/unique_ptr.h"
#include "ozz/geometry/runtime/skinning_job.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Parameters (README.md, "Measurement patterns"). Changing one changes what the figures mean.
// Per-clip patterns: the same as anchors/acl (acl_bench), so that ACL, ozz and ClipForge are
// measured alike.
constexpr int kEvenTimes = 100;              // T100: evenly spaced times over [0, D]
constexpr float kPlaybackHz = 60.f;          // T60: forward playback
constexpr int kSeekTimes = 1024;             // TSEEK: random times
constexpr uint64_t kSeekSeed = 0xC11FF0E6Eull;  // SplitMix64 seed of TSEEK
constexpr int kColdCopies = 220;             // cold: copies visited in turn
constexpr size_t kFlushBytes = size_t(40) << 20;  // cold: flush buffer, 40 MiB
constexpr int kColdPasses = 101;             // cold: timed passes of 220 calls (after 1 untimed)
constexpr uint32_t kMinCallsPerBlock = 256;  // warm: calls per block >= this, whole passes
constexpr int kWarmupBlocks = 5;             // warm: untimed blocks per pattern
constexpr int kWarmBlocks = 101;             // warm: timed blocks per pattern
constexpr int kCrowdCharacters = 1000;   // seed 001
constexpr int kCrowdJoints = 96;
constexpr int kCrowdFrames = 100;
constexpr int kSkinVertices = 50000;
constexpr int kSkinInfluences = 4;
constexpr int kSkinMeasurements = 100;
constexpr int kPoints = 8192;            // seed 002
constexpr int kPointCalls = 20000;

constexpr uint64_t kSeedSkeleton = 0x5EED0001;
constexpr uint64_t kSeedPoses = 0x5EED0002;
constexpr uint64_t kSeedPalette = 0x5EED0003;
constexpr uint64_t kSeedMesh = 0x5EED0004;
constexpr uint64_t kSeedPoints = 0x5EED0005;

bool g_quick = false;  // --quick: a tenth of the measurements (smoke test only)
int Scaled(int n) { return g_quick ? std::max(3, n / 10) : n; }

[[noreturn]] void Die(const char* fmt, const char* a = "", const char* b = "") {
  std::fprintf(stderr, "ozz_bench: ");
  std::fprintf(stderr, fmt, a, b);
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// ---------------------------------------------------------------------------------------------
// Timing: every measurement reads CLOCK_MONOTONIC (ns) and the TSC around the timed region.
struct Stamp {
  uint64_t ns;
  uint64_t tsc;
};

inline Stamp Now() {
  _mm_lfence();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t tsc = __rdtsc();
  _mm_lfence();
  return {uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec), tsc};
}

struct Samples {
  std::vector<double> ns;   // per unit (call, frame, vertex, point)
  std::vector<double> tsc;  // per unit, TSC ticks
  void Add(const Stamp& a, const Stamp& b, double units) {
    ns.push_back(double(b.ns - a.ns) / units);
    tsc.push_back(double(b.tsc - a.tsc) / units);
  }
};

double Quantile(std::vector<double> v, double q) {  // nearest rank on the sorted values
  std::sort(v.begin(), v.end());
  if (v.empty()) return NAN;
  size_t i = size_t(std::ceil(q * double(v.size())));
  i = i == 0 ? 0 : i - 1;
  if (i >= v.size()) i = v.size() - 1;
  return v[i];
}

// Median: the mean of the two middle values for an even count.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n == 0) return NAN;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Mean of the middle half of the sorted values (the statistic of seed 002's article).
double MiddleHalfMean(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t lo = v.size() / 4, hi = v.size() - v.size() / 4;
  double s = 0;
  for (size_t i = lo; i < hi; ++i) s += v[i];
  return s / double(hi - lo);
}

// Cache flush (as anchors/acl): a 40 MiB buffer (filled with 1 once), one read-modify-write
// byte per 64-byte line, buf[i] += (uint8_t)i for i = 0, 64, 128, ...; regular stores (glibc's
// memset would use non-temporal stores at this size, which do not evict other lines).
uint8_t* g_flush = nullptr;
volatile uint8_t g_sink;
void FlushCache() {
  if (!g_flush) {
    g_flush = static_cast<uint8_t*>(std::aligned_alloc(4096, kFlushBytes));
    std::memset(g_flush, 1, kFlushBytes);
  }
  uint8_t acc = 0;
  for (size_t i = 0; i < kFlushBytes; i += 64) {
    g_flush[i] = uint8_t(g_flush[i] + uint8_t(i));
    acc ^= g_flush[i];
  }
  g_sink = acc;
}

// ozz allocator wrapper: while `region_on` is set, each allocation takes the next page-aligned
// slot of a region (the cold copies, laid out like acl_bench's: copy c at base + c * stride);
// region blocks are freed with the region. Everything else goes to ozz's default allocator.
class RegionAllocator : public ozz::memory::Allocator {
 public:
  explicit RegionAllocator(ozz::memory::Allocator* fallback) : fallback_(fallback) {}
  void* Allocate(size_t size, size_t alignment) override {
    if (region_on) {
      if (next_ >= count_ || size > stride_ || alignment > 4096) Die("cold copy does not fit its slot");
      return base_ + stride_ * next_++;
    }
    return fallback_->Allocate(size, alignment);
  }
  void Deallocate(void* p) override {
    uint8_t* b = static_cast<uint8_t*>(p);
    if (base_ && b >= base_ && b < base_ + stride_ * count_) return;
    fallback_->Deallocate(p);
  }
  void Reset(size_t stride, size_t count) {
    std::free(base_);
    stride_ = stride;
    count_ = count;
    next_ = 0;
    base_ = count ? static_cast<uint8_t*>(std::aligned_alloc(4096, stride * count)) : nullptr;
    if (count && !base_) Die("out of memory for the cold copies");
  }
  size_t used() const { return next_; }
  bool region_on = false;

 private:
  ozz::memory::Allocator* fallback_;
  uint8_t* base_ = nullptr;
  size_t stride_ = 0, count_ = 0, next_ = 0;
};
RegionAllocator* g_region = nullptr;

// ---------------------------------------------------------------------------------------------
// Generators (README.md, "Generators"). Float64 arithmetic, one rounding to float32 at the end;
// compiled with -ffp-contract=off so that no multiply-add is fused.
struct SplitMix64 {
  uint64_t s;
  explicit SplitMix64(uint64_t seed) : s(seed) {}
  uint64_t Next() {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Unit() { return double(Next() >> 11) * (1.0 / 9007199254740992.0); }
  double Sym(double a) { return (2.0 * Unit() - 1.0) * a; }
};

struct Fnv {
  uint64_t h = 0xCBF29CE484222325ull;
  void Bytes(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001B3ull;
  }
};

std::string Hex(uint64_t h) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)h);
  return buf;
}

std::vector<int16_t> GenSkeleton(int n) {
  SplitMix64 r(kSeedSkeleton);
  std::vector<int16_t> parents{-1};
  std::vector<int> chain{0};
  for (int j = 1; j < n; ++j) {
    const double u = r.Unit();
    size_t i;
    if (u < 0.75 || chain.size() == 1) {
      i = chain.size() - 1;
    } else {
      i = size_t(r.Unit() * double(chain.size() - 1));
    }
    parents.push_back(int16_t(chain[i]));
    chain.resize(i + 1);
    chain.push_back(j);
  }
  return parents;
}

void GenQuat(SplitMix64& r, double q[4]) {
  const double x = r.Sym(0.5), y = r.Sym(0.5), z = r.Sym(0.5), w = 1.0;
  const double n = std::sqrt(((x * x + y * y) + z * z) + w * w);
  q[0] = x / n;
  q[1] = y / n;
  q[2] = z / n;
  q[3] = w / n;
}

// Poses: characters * joints entries of 7 floats (qx qy qz qw tx ty tz); scale is 1.
std::vector<float> GenPoses(int chars, int joints) {
  SplitMix64 r(kSeedPoses);
  std::vector<float> out;
  out.reserve(size_t(chars) * joints * 7);
  for (int i = 0; i < chars * joints; ++i) {
    double q[4];
    GenQuat(r, q);
    const double tx = r.Sym(10.0), ty = r.Sym(10.0), tz = r.Sym(10.0);
    for (double v : {q[0], q[1], q[2], q[3], tx, ty, tz}) out.push_back(float(v));
  }
  return out;
}

// Palette: n column-major 4x4 affine matrices (rotation from a generated quaternion, translation).
std::vector<float> GenPalette(int n) {
  SplitMix64 r(kSeedPalette);
  std::vector<float> m;
  for (int j = 0; j < n; ++j) {
    double q[4];
    GenQuat(r, q);
    const double tx = r.Sym(1.0), ty = r.Sym(1.0), tz = r.Sym(1.0);
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    const double xx = x * x, yy = y * y, zz = z * z;
    const double xy = x * y, xz = x * z, yz = y * z;
    const double wx = w * x, wy = w * y, wz = w * z;
    const double v[16] = {1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy), 0.0,
                          2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx), 0.0,
                          2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy), 0.0,
                          tx, ty, tz, 1.0};
    for (double e : v) m.push_back(float(e));
  }
  return m;
}

struct Mesh {
  int vertices = 0, influences = 0, joints = 0;
  std::vector<float> positions, normals, weights;  // 3, 3, influences floats per vertex
  std::vector<uint16_t> indices;                   // influences per vertex
  uint64_t hash = 0;                               // FNV-1a 64 of the .cfmesh body
};

uint64_t MeshHash(const Mesh& m) {
  Fnv f;
  f.Bytes(m.positions.data(), m.positions.size() * 4);
  f.Bytes(m.normals.data(), m.normals.size() * 4);
  f.Bytes(m.indices.data(), m.indices.size() * 2);
  f.Bytes(m.weights.data(), m.weights.size() * 4);
  return f.h;
}

Mesh GenMesh(int V, int J, int K) {
  SplitMix64 r(kSeedMesh);
  Mesh m;
  m.vertices = V;
  m.joints = J;
  m.influences = K;
  for (int v = 0; v < V; ++v) {
    for (int c = 0; c < 3; ++c) m.positions.push_back(float(r.Sym(100.0)));
    const double x = r.Sym(1.0), y = r.Sym(1.0), z = r.Sym(1.0);
    const double n = std::sqrt((x * x + y * y) + z * z);
    if (n >= 1e-6) {
      m.normals.push_back(float(x / n));
      m.normals.push_back(float(y / n));
      m.normals.push_back(float(z / n));
    } else {
      m.normals.push_back(0.f);
      m.normals.push_back(1.f);
      m.normals.push_back(0.f);
    }
    std::vector<int> chosen;
    while (int(chosen.size()) < K) {
      const int j = int(r.Unit() * double(J));
      if (std::find(chosen.begin(), chosen.end(), j) == chosen.end()) chosen.push_back(j);
    }
    for (int j : chosen) m.indices.push_back(uint16_t(j));
    double w[16];
    double s = 0;
    for (int k = 0; k < K; ++k) w[k] = 0.05 + r.Unit();
    for (int k = 0; k < K; ++k) s += w[k];  // ((w0 + w1) + w2) + w3
    for (int k = 0; k < K; ++k) m.weights.push_back(float(w[k] / s));
  }
  m.hash = MeshHash(m);
  return m;
}

// ---------------------------------------------------------------------------------------------
// File formats (README.md, "Binary formats").
std::vector<uint8_t> ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) Die("cannot open %s", path.c_str());
  std::vector<uint8_t> data;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.insert(data.end(), buf, buf + n);
  std::fclose(f);
  return data;
}

struct Clip {
  std::string name;
  uint32_t bones = 0, samples = 0;
  float rate = 0;
  std::vector<int32_t> parents;
  std::vector<float> bind;     // bones * 10
  std::vector<float> samples_; // samples * bones * 10, sample-major
};

Clip LoadClip(const std::string& name, const std::string& path) {
  const std::vector<uint8_t> d = ReadFile(path);
  if (d.size() < 32 || std::memcmp(d.data(), "CFANIM1\0", 8) != 0)
    Die("%s: not a .cfanim file", path.c_str());
  uint32_t version, bones, samples, flags, names;
  float rate;
  std::memcpy(&version, &d[8], 4);
  std::memcpy(&bones, &d[12], 4);
  std::memcpy(&samples, &d[16], 4);
  std::memcpy(&rate, &d[20], 4);
  std::memcpy(&flags, &d[24], 4);
  std::memcpy(&names, &d[28], 4);
  if (version != 1) Die("%s: unsupported .cfanim version", path.c_str());
  const size_t expect = 32 + size_t(bones) * 4 + size_t(bones) * 40 +
                        size_t(samples) * bones * 40 + names;
  if (bones == 0 || samples == 0 || d.size() != expect || !(rate > 0))
    Die("%s: inconsistent .cfanim header/size", path.c_str());
  Clip c;
  c.name = name;
  c.bones = bones;
  c.samples = samples;
  c.rate = rate;
  c.parents.resize(bones);
  std::memcpy(c.parents.data(), &d[32], bones * 4);
  c.bind.resize(size_t(bones) * 10);
  std::memcpy(c.bind.data(), &d[32 + bones * 4], bones * 40);
  c.samples_.resize(size_t(samples) * bones * 10);
  std::memcpy(c.samples_.data(), &d[32 + bones * 44], c.samples_.size() * 4);
  for (uint32_t b = 0; b < bones; ++b)
    if (c.parents[b] >= int32_t(b) || c.parents[b] < -1)
      Die("%s: a parent index is not before its child", path.c_str());
  return c;
}

Mesh LoadMesh(const std::string& path) {
  const std::vector<uint8_t> d = ReadFile(path);
  if (d.size() < 32 || std::memcmp(d.data(), "CFMESH1\0", 8) != 0)
    Die("%s: not a .cfmesh file", path.c_str());
  uint32_t h[6];
  std::memcpy(h, &d[8], 24);
  Mesh m;
  m.vertices = int(h[1]);
  m.influences = int(h[2]);
  m.joints = int(h[3]);
  const bool has_normals = h[4] & 1;
  const size_t V = h[1], K = h[2];
  const size_t expect = 32 + V * 12 + (has_normals ? V * 12 : 0) + V * K * 2 + V * K * 4;
  if (h[0] != 1 || d.size() != expect || K == 0 || !has_normals)
    Die("%s: inconsistent .cfmesh (or no normals)", path.c_str());
  size_t o = 32;
  m.positions.resize(V * 3);
  std::memcpy(m.positions.data(), &d[o], V * 12);
  o += V * 12;
  m.normals.resize(V * 3);
  std::memcpy(m.normals.data(), &d[o], V * 12);
  o += V * 12;
  m.indices.resize(V * K);
  std::memcpy(m.indices.data(), &d[o], V * K * 2);
  o += V * K * 2;
  m.weights.resize(V * K);
  std::memcpy(m.weights.data(), &d[o], V * K * 4);
  for (uint16_t i : m.indices)
    if (int(i) >= m.joints) Die("%s: a joint index is out of range", path.c_str());
  m.hash = MeshHash(m);
  return m;
}

// ---------------------------------------------------------------------------------------------
// ozz objects from our data.
using ozz::animation::Animation;
using ozz::animation::Skeleton;
using ozz::animation::offline::RawAnimation;
using ozz::animation::offline::RawSkeleton;

// Joints are named by their index in our file ("0", "1", ...) so that the depth-first order the
// SkeletonBuilder produces can be mapped back; children are listed in increasing index order.
ozz::unique_ptr<Skeleton> BuildSkeleton(const std::vector<int>& parents, const float* bind,
                                        std::vector<int>* ozz_to_file) {
  const int n = int(parents.size());
  std::vector<std::vector<int>> children(n);
  std::vector<int> roots;
  for (int j = 0; j < n; ++j) (parents[j] < 0 ? roots : children[parents[j]]).push_back(j);
  struct Rec {
    const std::vector<std::vector<int>>& ch;
    const float* bind;
    void Fill(RawSkeleton::Joint& out, int j) const {
      out.name = std::to_string(j).c_str();
      if (bind) {
        const float* b = bind + j * 10;
        out.transform.rotation = ozz::math::Quaternion(b[0], b[1], b[2], b[3]);
        out.transform.translation = ozz::math::Float3(b[4], b[5], b[6]);
        out.transform.scale = ozz::math::Float3(b[7], b[8], b[9]);
      } else {
        out.transform = ozz::math::Transform::identity();
      }
      out.children.resize(ch[j].size());
      for (size_t i = 0; i < ch[j].size(); ++i) Fill(out.children[i], ch[j][i]);
    }
  } rec{children, bind};
  RawSkeleton raw;
  raw.roots.resize(roots.size());
  for (size_t i = 0; i < roots.size(); ++i) rec.Fill(raw.roots[i], roots[i]);
  if (!raw.Validate()) Die("RawSkeleton does not validate");
  ozz::unique_ptr<Skeleton> skel = ozz::animation::offline::SkeletonBuilder()(raw);
  if (!skel) Die("SkeletonBuilder failed");
  ozz_to_file->clear();
  for (const char* name : skel->joint_names()) ozz_to_file->push_back(std::atoi(name));
  return skel;
}

// One key per sample for every track and component; key time = float(s) / rate (float32, as
// acl_bench's D), duration D = float(S - 1) / rate. A single-sample clip gets duration 1 / rate
// (ozz needs a positive duration; every time it is sampled at is 0).
RawAnimation BuildRaw(const Clip& c, const std::vector<int>& ozz_to_file) {
  RawAnimation raw;
  raw.name = c.name.c_str();
  raw.duration = c.samples > 1 ? float(c.samples - 1) / c.rate : 1.f / c.rate;
  raw.tracks.resize(c.bones);
  for (uint32_t j = 0; j < c.bones; ++j) {
    RawAnimation::JointTrack& t = raw.tracks[j];
    const int b = ozz_to_file[j];
    t.translations.resize(c.samples);
    t.rotations.resize(c.samples);
    t.scales.resize(c.samples);
    for (uint32_t s = 0; s < c.samples; ++s) {
      const float* v = &c.samples_[(size_t(s) * c.bones + b) * 10];
      const float time = float(s) / c.rate;
      t.rotations[s] = {time, ozz::math::Quaternion(v[0], v[1], v[2], v[3])};
      t.translations[s] = {time, ozz::math::Float3(v[4], v[5], v[6])};
      t.scales[s] = {time, ozz::math::Float3(v[7], v[8], v[9])};
    }
  }
  if (!raw.Validate()) Die("%s: RawAnimation does not validate", c.name.c_str());
  return raw;
}

// Sanity check of the built animation: sampled at sample index S/2 (and 0), every joint's local
// rotation (up to sign), translation and scale must match the file within ozz's key quantisation
// (half-float translations/scales, 16-bit rotation components). Returns the worst deviation.
double VerifyAnimation(const Clip& c, const Skeleton& skel, const Animation& anim,
                       const std::vector<int>& ozz_to_file) {
  std::vector<ozz::math::SoaTransform> locals(skel.num_soa_joints());
  ozz::animation::SamplingJob::Context ctx(anim.num_tracks());
  double worst = 0;
  for (uint32_t s : {0u, c.samples / 2}) {
    ozz::animation::SamplingJob sj;
    sj.animation = &anim;
    sj.context = &ctx;
    sj.ratio = c.samples > 1 ? float(double(s) / double(c.samples - 1)) : 0.f;
    sj.output = ozz::make_span(locals);
    if (!sj.Run()) Die("SamplingJob failed");
    for (uint32_t j = 0; j < c.bones; ++j) {
      const ozz::math::SoaTransform& t = locals[j / 4];
      const int lane = j % 4;
      float v[10][4];
      const ozz::math::SimdFloat4 comps[10] = {t.rotation.x,    t.rotation.y,    t.rotation.z,
                                               t.rotation.w,    t.translation.x, t.translation.y,
                                               t.translation.z, t.scale.x,       t.scale.y,
                                               t.scale.z};
      for (int e = 0; e < 10; ++e) ozz::math::StorePtrU(comps[e], v[e]);
      const float* f = &c.samples_[(size_t(s) * c.bones + ozz_to_file[j]) * 10];
      double dq_pos = 0, dq_neg = 0;
      for (int e = 0; e < 4; ++e) {
        dq_pos = std::max(dq_pos, double(std::fabs(v[e][lane] - f[e])));
        dq_neg = std::max(dq_neg, double(std::fabs(v[e][lane] + f[e])));
      }
      worst = std::max(worst, std::min(dq_pos, dq_neg) / 1e-3);  // rotations: 1e-3 allowed
      for (int e = 4; e < 10; ++e) {  // half floats: relative 1e-3, absolute 1e-3 near zero
        const double tol = 1e-3 * std::max(1.0, double(std::fabs(f[e])));
        worst = std::max(worst, double(std::fabs(v[e][lane] - f[e])) / tol);
      }
    }
  }
  return worst;  // in units of the tolerance: <= 1 passes
}

// ---------------------------------------------------------------------------------------------
// TSV output.
void Header() {
  std::printf(
      "case\tclip_or_size\tozz_ns\tunit\tmin_ns\tp90_ns\ttsc_cycles\tmeasurements\tper_measurement"
      "\tjoints\tsamples\tbytes\tnotes\n");
}

void Row(const char* kase, const std::string& what, const Samples& s, const char* unit,
         long per_measurement, long joints, long samples, long bytes, const std::string& notes) {
  std::printf("%s\t%s\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t%zu\t%ld\t%ld\t%ld\t%ld\t%s\n", kase,
              what.c_str(), Median(s.ns), unit, Quantile(s.ns, 0.0), Quantile(s.ns, 0.9),
              Median(s.tsc), s.ns.size(), per_measurement, joints, samples, bytes,
              notes.empty() ? "-" : notes.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// 1. Per clip: SamplingJob + LocalToModelJob per character update, with acl_bench's time lists
// and patterns (README.md, "Measurement patterns").
uint64_t SplitMixStep(uint64_t& s) {
  s += 0x9E3779B97F4A7C15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Time lists, float32 arithmetic left to right, exactly as acl_bench: D, T100, T60, TSEEK.
struct Times {
  float d = 0;
  std::vector<float> even, playback, seek;
};

Times MakeTimes(uint32_t samples, float rate) {
  Times t;
  const float d = (samples > 1 && rate > 0.f) ? float(samples - 1) / rate : 0.f;
  t.d = d;
  for (int j = 0; j < kEvenTimes; ++j) t.even.push_back(d * float(j) / float(kEvenTimes - 1));
  for (uint32_t k = 0;; ++k) {
    const float x = float(k) / kPlaybackHz;
    if (x > d) break;
    t.playback.push_back(x);
  }
  uint64_t state = kSeekSeed;
  for (int i = 0; i < kSeekTimes; ++i) {
    const float u = float(SplitMixStep(state) >> 40) * (1.f / 16777216.f);
    t.seek.push_back(u * d);
  }
  return t;
}

// ozz samples at a ratio: ratio = t / D (float32), 0 when D = 0 (single-sample clip).
std::vector<float> ToRatios(const std::vector<float>& times, float d) {
  std::vector<float> r;
  for (float x : times) r.push_back(d > 0.f ? x / d : 0.f);
  return r;
}

struct Update {
  const Skeleton* skel;
  bool l2m;
  std::vector<ozz::math::SoaTransform> locals;
  std::vector<ozz::math::Float4x4> models;
  Update(const Skeleton* s, bool with_l2m)
      : skel(s), l2m(with_l2m), locals(s->num_soa_joints()), models(s->num_joints()) {}
  void Run(const Animation& anim, ozz::animation::SamplingJob::Context& ctx, float ratio) {
    ozz::animation::SamplingJob sj;
    sj.animation = &anim;
    sj.context = &ctx;
    sj.ratio = ratio;
    sj.output = ozz::make_span(locals);
    if (!sj.Run()) Die("SamplingJob failed");
    if (!l2m) return;
    ozz::animation::LocalToModelJob lj;
    lj.skeleton = skel;
    lj.input = ozz::make_span(locals);
    lj.output = ozz::make_span(models);
    if (!lj.Run()) Die("LocalToModelJob failed");
  }
};

// Cold: 220 copies in one page-aligned region (copy c at c * stride, stride = the animation's
// allocation rounded up to 4 KiB), each with its own context; call n uses copy n mod 220 at
// T100[n mod 100]; a pass is 220 calls, flush before each pass (untimed), pass 0 untimed.
struct ColdCopies {
  std::vector<std::unique_ptr<Animation>> copies;
  std::vector<std::unique_ptr<ozz::animation::SamplingJob::Context>> ctxs;
  ColdCopies(const Animation& anim) {
    ozz::io::MemoryStream stream;
    {
      ozz::io::OArchive o(&stream);
      o << anim;
    }
    for (int c = 0; c < kColdCopies; ++c)
      ctxs.emplace_back(new ozz::animation::SamplingJob::Context(anim.num_tracks()));
    const size_t stride = (anim.size() + 4095) / 4096 * 4096;
    g_region->Reset(stride, kColdCopies);
    for (int c = 0; c < kColdCopies; ++c) {
      stream.Seek(0, ozz::io::Stream::kSet);
      ozz::io::IArchive i(&stream);
      copies.emplace_back(new Animation());
      g_region->region_on = true;
      i >> *copies.back();
      g_region->region_on = false;
      if (g_region->used() != size_t(c + 1)) Die("a cold copy took more than one allocation");
    }
  }
  ~ColdCopies() {
    copies.clear();
    g_region->Reset(0, 0);
  }
};

Samples BenchCold(const Skeleton& skel, const ColdCopies& cc, const std::vector<float>& ratios,
                  bool l2m) {
  Update up(&skel, l2m);
  Samples s;
  const size_t n = ratios.size();
  uint64_t call = 0;
  const int passes = g_quick ? 11 : kColdPasses;
  for (int pass = 0; pass < 1 + passes; ++pass) {
    FlushCache();
    const Stamp a = Now();
    for (int c = 0; c < kColdCopies; ++c, ++call)
      up.Run(*cc.copies[call % kColdCopies], *cc.ctxs[call % kColdCopies], ratios[call % n]);
    const Stamp b = Now();
    if (pass > 0) s.Add(a, b, kColdCopies);
  }
  return s;
}

// Warm: one animation; each pattern has its own context, call counter (running on across
// blocks) and buffers; a block = whole passes over its list, >= 256 calls.
struct WarmPattern {
  std::vector<float> ratios;
  Update up;
  ozz::animation::SamplingJob::Context ctx;
  uint32_t calls_per_block;
  uint64_t call = 0;
  Samples s;
  WarmPattern(const Skeleton& skel, const Animation& anim, std::vector<float> r, bool l2m)
      : ratios(std::move(r)), up(&skel, l2m), ctx(anim.num_tracks()) {
    const uint32_t n = uint32_t(ratios.size());
    calls_per_block = n * ((kMinCallsPerBlock + n - 1) / n);
  }
  void Block(const Animation& anim, bool timed) {
    const size_t n = ratios.size();
    const Stamp a = Now();
    for (uint32_t c = 0; c < calls_per_block; ++c, ++call) up.Run(anim, ctx, ratios[call % n]);
    const Stamp b = Now();
    if (timed) s.Add(a, b, calls_per_block);
  }
};

struct ClipSummary {
  std::vector<double> fig[2][6];  // [raw, opt][pattern]: per-clip medians
};

const char* kPatternNames[6] = {"cold", "warm", "play60", "seek", "cold_sample", "warm_sample"};

void BenchClips(const std::string& list, ClipSummary* sum) {
  FILE* f = std::fopen(list.c_str(), "r");
  if (!f) Die("cannot open clip list %s", list.c_str());
  char line[4096];
  while (std::fgets(line, sizeof(line), f)) {
    std::string l(line);
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
    if (l.empty() || l[0] == '#') continue;
    const size_t tab = l.find('\t');
    if (tab == std::string::npos) Die("clip list line without a tab: %s", l.c_str());
    const std::string name = l.substr(0, tab), path = l.substr(tab + 1);
    const Clip clip = LoadClip(name, path);
    std::vector<int> parents(clip.parents.begin(), clip.parents.end());
    std::vector<int> ozz_to_file;
    ozz::unique_ptr<Skeleton> skel = BuildSkeleton(parents, clip.bind.data(), &ozz_to_file);
    bool reordered = false;
    for (size_t j = 0; j < ozz_to_file.size(); ++j) reordered |= ozz_to_file[j] != int(j);
    const RawAnimation raw = BuildRaw(clip, ozz_to_file);
    ozz::unique_ptr<Animation> anim_raw = ozz::animation::offline::AnimationBuilder()(raw);
    if (!anim_raw) Die("%s: AnimationBuilder failed", name.c_str());
    const double dev = VerifyAnimation(clip, *skel, *anim_raw, ozz_to_file);
    if (!(dev <= 1.0)) {
      char msg[64];
      std::snprintf(msg, sizeof(msg), "%.3g", dev);
      Die("%s: sampled ozz animation deviates from the clip (%s x tolerance)", name.c_str(), msg);
    }
    RawAnimation raw_opt;
    if (!ozz::animation::offline::AnimationOptimizer()(raw, *skel, &raw_opt))
      Die("%s: AnimationOptimizer failed", name.c_str());
    ozz::unique_ptr<Animation> anim_opt = ozz::animation::offline::AnimationBuilder()(raw_opt);
    if (!anim_opt) Die("%s: AnimationBuilder (optimized) failed", name.c_str());
    const Times times = MakeTimes(clip.samples, clip.rate);
    const std::vector<float> r_even = ToRatios(times.even, times.d);
    const std::vector<float> r_play = ToRatios(times.playback, times.d);
    const std::vector<float> r_seek = ToRatios(times.seek, times.d);
    const std::string order = reordered ? "ozz_reordered_joints" : "ozz_order=file_order";
    std::fprintf(stderr, "clip %s: %u joints, %u samples, ozz %zu B raw, %zu B optimized\n",
                 name.c_str(), clip.bones, clip.samples, anim_raw->size(), anim_opt->size());
    const Animation* anims[2] = {anim_raw.get(), anim_opt.get()};
    const char* tags[2] = {"raw", "opt"};
    for (int v = 0; v < 2; ++v) {
      const Animation& a = *anims[v];
      const std::string notes =
          order + (v ? ";optimizer_default(tolerance=1e-3,distance=1e-1)" : ";one_key_per_sample");
      auto row = [&](int p, const Samples& s, long per) {
        const std::string kase = std::string("clip_") + kPatternNames[p] + "_" + tags[v];
        std::string n = notes;
        if (p == 0 || p == 4) n += ";copies=220;flush=40MiB";
        if (p >= 4) n += ";sampling_job_only";
        Row(kase.c_str(), name, s, "call", per, clip.bones, clip.samples, long(a.size()), n);
        sum->fig[v][p].push_back(Median(s.ns));
      };
      Samples cold, cold_sample;
      {
        ColdCopies cc(a);
        cold = BenchCold(*skel, cc, r_even, true);
        cold_sample = BenchCold(*skel, cc, r_even, false);
      }
      WarmPattern warm(*skel, a, r_even, true), play(*skel, a, r_play, true),
          seek(*skel, a, r_seek, true), warm_sample(*skel, a, r_even, false);
      WarmPattern* ps[4] = {&warm, &play, &seek, &warm_sample};
      const int blocks = g_quick ? 11 : kWarmBlocks;
      for (int round = 0; round < kWarmupBlocks + blocks; ++round)
        for (WarmPattern* p : ps) p->Block(a, round >= kWarmupBlocks);
      row(0, cold, kColdCopies);
      row(1, warm.s, warm.calls_per_block);
      row(2, play.s, play.calls_per_block);
      row(3, seek.s, seek.calls_per_block);
      row(4, cold_sample, kColdCopies);
      row(5, warm_sample.s, warm_sample.calls_per_block);
    }
  }
  std::fclose(f);
}

// ---------------------------------------------------------------------------------------------
// 2. Seed 001: LocalToModelJob, 1,000 characters x 96 joints.
void BenchCrowd() {
  const std::vector<int16_t> gen = GenSkeleton(kCrowdJoints);
  Fnv hs;
  hs.Bytes(gen.data(), gen.size() * 2);
  std::vector<int> parents(gen.begin(), gen.end());
  std::vector<int> ozz_to_file;
  ozz::unique_ptr<Skeleton> skel = BuildSkeleton(parents, nullptr, &ozz_to_file);
  for (int j = 0; j < kCrowdJoints; ++j)
    if (ozz_to_file[j] != j || skel->joint_parents()[j] != gen[j])
      Die("generated skeleton is not in ozz's depth-first order");
  int max_depth = 0;
  {
    std::vector<int> depth(kCrowdJoints, 0);
    for (int j = 1; j < kCrowdJoints; ++j) max_depth = std::max(max_depth, depth[j] = depth[gen[j]] + 1);
  }
  const std::vector<float> poses = GenPoses(kCrowdCharacters, kCrowdJoints);
  Fnv hp;
  hp.Bytes(poses.data(), poses.size() * 4);
  const int soa = skel->num_soa_joints();
  std::vector<ozz::math::SoaTransform> locals(size_t(kCrowdCharacters) * soa);
  for (int c = 0; c < kCrowdCharacters; ++c) {
    for (int s = 0; s < soa; ++s) {
      float v[7][4];
      for (int lane = 0; lane < 4; ++lane)
        for (int e = 0; e < 7; ++e)
          v[e][lane] = poses[(size_t(c) * kCrowdJoints + s * 4 + lane) * 7 + e];
      using ozz::math::simd_float4::LoadPtrU;
      ozz::math::SoaTransform& t = locals[size_t(c) * soa + s];
      t.rotation = ozz::math::SoaQuaternion::Load(LoadPtrU(v[0]), LoadPtrU(v[1]), LoadPtrU(v[2]),
                                                  LoadPtrU(v[3]));
      t.translation = ozz::math::SoaFloat3::Load(LoadPtrU(v[4]), LoadPtrU(v[5]), LoadPtrU(v[6]));
      t.scale = ozz::math::SoaFloat3::one();
    }
  }
  std::vector<ozz::math::Float4x4> models(size_t(kCrowdCharacters) * kCrowdJoints);
  auto frame = [&]() {
    for (int c = 0; c < kCrowdCharacters; ++c) {
      ozz::animation::LocalToModelJob lj;
      lj.skeleton = skel.get();
      lj.input = ozz::span<const ozz::math::SoaTransform>(&locals[size_t(c) * soa], soa);
      lj.output = ozz::span<ozz::math::Float4x4>(&models[size_t(c) * kCrowdJoints], kCrowdJoints);
      if (!lj.Run()) Die("LocalToModelJob failed");
    }
  };
  for (int i = 0; i < 3; ++i) frame();
  Samples s;
  for (int i = 0; i < Scaled(kCrowdFrames); ++i) {
    const Stamp a = Now();
    frame();
    const Stamp b = Now();
    s.Add(a, b, 1);
  }
  char notes[256];
  std::snprintf(notes, sizeof(notes), "ms_per_frame=%.3f;ns_per_character=%.1f;max_depth=%d;skeleton96=%s;poses1000x96=%s",
                Median(s.ns) / 1e6, Median(s.ns) / kCrowdCharacters, max_depth,
                Hex(hs.h).c_str(), Hex(hp.h).c_str());
  Row("l2m_crowd", "1000x96", s, "frame", 1, kCrowdJoints, kCrowdCharacters,
      long(locals.size() * sizeof(ozz::math::SoaTransform) + models.size() * sizeof(ozz::math::Float4x4)),
      notes);
}

// ---------------------------------------------------------------------------------------------
// 3. SkinningJob: positions + normals, 4 influences.
void BenchSkin(const char* kase, const std::string& what, const Mesh& m, int runs_per_measurement,
               int measurements, const std::string& extra) {
  const std::vector<float> pal = GenPalette(96);
  Fnv hp;
  hp.Bytes(pal.data(), pal.size() * 4);
  if (m.joints > 96) Die("mesh has more than 96 joints");
  std::vector<ozz::math::Float4x4> palette(m.joints);
  for (int j = 0; j < m.joints; ++j)
    for (int c = 0; c < 4; ++c) palette[j].cols[c] = ozz::math::simd_float4::LoadPtrU(&pal[j * 16 + c * 4]);
  const int V = m.vertices, K = m.influences;
  std::vector<float> out_pos(size_t(V) * 3), out_nrm(size_t(V) * 3);
  ozz::geometry::SkinningJob job;
  job.vertex_count = V;
  job.influences_count = K;
  job.joint_matrices = ozz::make_span(palette);
  job.joint_indices = ozz::make_span(m.indices);
  job.joint_indices_stride = sizeof(uint16_t) * K;
  job.joint_weights = ozz::make_span(m.weights);
  job.joint_weights_stride = sizeof(float) * K;  // ozz reads the first K-1 and restores the last
  job.in_positions = ozz::make_span(m.positions);
  job.in_positions_stride = 12;
  job.in_normals = ozz::make_span(m.normals);
  job.in_normals_stride = 12;
  job.out_positions = ozz::make_span(out_pos);
  job.out_positions_stride = 12;
  job.out_normals = ozz::make_span(out_nrm);
  job.out_normals_stride = 12;
  if (!job.Validate()) Die("SkinningJob does not validate");
  for (int i = 0; i < 3; ++i) job.Run();
  Samples s;
  for (int i = 0; i < Scaled(measurements); ++i) {
    const Stamp a = Now();
    for (int r = 0; r < runs_per_measurement; ++r) job.Run();
    const Stamp b = Now();
    s.Add(a, b, double(V) * runs_per_measurement);
  }
  const size_t bytes = m.positions.size() * 4 * 2 + m.normals.size() * 4 * 2 + m.indices.size() * 2 +
                       m.weights.size() * 4;
  const std::string notes = extra + "=" + Hex(m.hash) + ";palette96=" + Hex(hp.h);
  Row(kase, what, s, "vertex", long(V) * runs_per_measurement, m.joints, V, long(bytes), notes);
}

// ---------------------------------------------------------------------------------------------
// 4. Seed 002: 8,192 points x one column-major 4x4 matrix, w = 1, Vec4 output. Written from the
// article's description (restrictions, data layout, 4 points per SSE iteration); not ozz code.
struct V3 {
  float x, y, z;
};
struct V4 {
  float x, y, z, w;
};

#if defined(__clang__)
#define CF_NOVEC __attribute__((noinline))
#define CF_NOVEC_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define CF_NOVEC __attribute__((noinline, optimize("no-tree-vectorize")))
#define CF_NOVEC_LOOP
#endif

CF_NOVEC void XformScalar(const V3* __restrict src, V4* __restrict dst, unsigned n,
                          const float* __restrict m) {
  CF_NOVEC_LOOP
  for (unsigned i = 0; i < n; ++i) {
    const V3& s = src[i];
    V4& d = dst[i];
    d.x = m[0] * s.x + m[4] * s.y + m[8] * s.z + m[12];
    d.y = m[1] * s.x + m[5] * s.y + m[9] * s.z + m[13];
    d.z = m[2] * s.x + m[6] * s.y + m[10] * s.z + m[14];
    d.w = m[3] * s.x + m[7] * s.y + m[11] * s.z + m[15];
  }
}

__attribute__((noinline)) void XformAutovec(const V3* __restrict src, V4* __restrict dst,
                                            unsigned n, const float* __restrict m) {
  for (unsigned i = 0; i < n; ++i) {
    const V3& s = src[i];
    V4& d = dst[i];
    d.x = m[0] * s.x + m[4] * s.y + m[8] * s.z + m[12];
    d.y = m[1] * s.x + m[5] * s.y + m[9] * s.z + m[13];
    d.z = m[2] * s.x + m[6] * s.y + m[10] * s.z + m[14];
    d.w = m[3] * s.x + m[7] * s.y + m[11] * s.z + m[15];
  }
}

// 4 points per iteration: three aligned loads (x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3), each
// component broadcast with a shuffle and multiplied by a matrix column, prefetch ahead as in the
// article; ceil(n / 4) iterations (arrays are padded to a multiple of 4 points).
__attribute__((noinline)) void XformSse(const V3* __restrict src, V4* __restrict dst, unsigned n,
                                        const float* __restrict m) {
  const float* s = &src[0].x;
  float* d = &dst[0].x;
  const __m128 c0 = _mm_load_ps(m), c1 = _mm_load_ps(m + 4), c2 = _mm_load_ps(m + 8),
               c3 = _mm_load_ps(m + 12);
  const unsigned iters = (n + 3) / 4;
  for (unsigned it = 0; it < iters; ++it, s += 12, d += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(s) + 256, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(d) + 128, _MM_HINT_T0);
    const __m128 a = _mm_load_ps(s), b = _mm_load_ps(s + 4), c = _mm_load_ps(s + 8);
#define CF_B(v, i) _mm_shuffle_ps(v, v, _MM_SHUFFLE(i, i, i, i))
    const __m128 p0 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(CF_B(a, 0), c0), _mm_mul_ps(CF_B(a, 1), c1)),
                                 _mm_add_ps(_mm_mul_ps(CF_B(a, 2), c2), c3));
    const __m128 p1 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(CF_B(a, 3), c0), _mm_mul_ps(CF_B(b, 0), c1)),
                                 _mm_add_ps(_mm_mul_ps(CF_B(b, 1), c2), c3));
    const __m128 p2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(CF_B(b, 2), c0), _mm_mul_ps(CF_B(b, 3), c1)),
                                 _mm_add_ps(_mm_mul_ps(CF_B(c, 0), c2), c3));
    const __m128 p3 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(CF_B(c, 1), c0), _mm_mul_ps(CF_B(c, 2), c1)),
                                 _mm_add_ps(_mm_mul_ps(CF_B(c, 3), c2), c3));
#undef CF_B
    _mm_store_ps(d, p0);
    _mm_store_ps(d + 4, p1);
    _mm_store_ps(d + 8, p2);
    _mm_store_ps(d + 12, p3);
  }
}

void BenchPoints() {
  SplitMix64 r(kSeedPoints);
  const unsigned n = kPoints, padded = (n + 3) / 4 * 4;
  V3* src = static_cast<V3*>(std::aligned_alloc(64, padded * sizeof(V3) + 64));
  V4* dst = static_cast<V4*>(std::aligned_alloc(64, padded * sizeof(V4)));
  alignas(16) float m[16];
  std::memset(src, 0, padded * sizeof(V3) + 64);
  for (unsigned i = 0; i < n; ++i) {
    src[i].x = float(r.Sym(100.0));
    src[i].y = float(r.Sym(100.0));
    src[i].z = float(r.Sym(100.0));
  }
  for (float& e : m) e = float(r.Sym(1.0));
  Fnv h;
  h.Bytes(src, n * sizeof(V3));
  h.Bytes(m, sizeof(m));
  // The three versions must agree (the SSE one adds in a different order: small differences).
  std::vector<V4> ref(n);
  XformScalar(src, ref.data(), n, m);
  XformSse(src, dst, n, m);
  double maxdiff = 0;
  for (unsigned i = 0; i < n; ++i)
    maxdiff = std::max({maxdiff, double(std::fabs(dst[i].x - ref[i].x)), double(std::fabs(dst[i].y - ref[i].y)),
                        double(std::fabs(dst[i].z - ref[i].z)), double(std::fabs(dst[i].w - ref[i].w))});
  if (maxdiff > 1e-3) Die("SSE transform disagrees with the scalar loop");
  struct F {
    const char* kase;
    void (*fn)(const V3*, V4*, unsigned, const float*);
    const char* what;
  } fns[] = {{"xform_scalar", XformScalar, "article_C_loop_no_autovectorization"},
             {"xform_autovec", XformAutovec, "article_C_loop_compiler_free_to_vectorize"},
             {"xform_sse", XformSse, "4_points_per_iteration_intrinsics"}};
  for (const F& f : fns) {
    for (int i = 0; i < 100; ++i) f.fn(src, dst, n, m);
    Samples s;
    for (int i = 0; i < Scaled(kPointCalls); ++i) {
      const Stamp a = Now();
      f.fn(src, dst, n, m);
      const Stamp b = Now();
      s.Add(a, b, n);
    }
    char notes[256];
    std::snprintf(notes, sizeof(notes),
                  "not_ozz(seed_002);%s;tsc_middle_half_mean=%.2f;points8192=%s", f.what,
                  MiddleHalfMean(s.tsc), Hex(h.h).c_str());
    Row(f.kase, "8192", s, "point", n, 0, 0, long(n * (sizeof(V3) + sizeof(V4))), notes);
  }
  std::free(src);
  std::free(dst);
}

}  // namespace

int main(int argc, char** argv) {
  std::string clips, fox, only = "clips,l2m,skin,xform";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--clips" && i + 1 < argc) {
      clips = argv[++i];
    } else if (a == "--fox" && i + 1 < argc) {
      fox = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--quick") {
      g_quick = true;
    } else {
      std::fprintf(stderr,
                   "usage: ozz_bench [--clips LIST.tsv] [--fox FOX.cfmesh] "
                   "[--only clips,l2m,skin,xform] [--quick]\n");
      return 2;
    }
  }
  g_region = new RegionAllocator(ozz::memory::default_allocator());
  ozz::memory::SetDefaulAllocator(g_region);
  auto want = [&](const char* w) { return ("," + only + ",").find(std::string(",") + w + ",") != std::string::npos; };

  // TSC frequency against CLOCK_MONOTONIC over 200 ms (informational: converts tsc_cycles).
  const Stamp t0 = Now();
  timespec req{0, 200000000};
  nanosleep(&req, nullptr);
  const Stamp t1 = Now();
  const double tsc_mhz = double(t1.tsc - t0.tsc) / double(t1.ns - t0.ns) * 1e3;

  double load1 = -1;
  if (FILE* la = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(la, "%lf", &load1) != 1) load1 = -1;
    std::fclose(la);
  }
  Header();
  char meta[512];
  std::snprintf(meta, sizeof(meta), "compiler=%s;flags=%s;ozz=0.16.0;tsc_mhz=%.1f;loadavg1=%.2f;quick=%d",
#if defined(__clang__)
                "clang " __clang_version__,
#else
                "g++ " __VERSION__,
#endif
#ifdef CF_FLAGS
                CF_FLAGS,
#else
                "?",
#endif
                tsc_mhz, load1, g_quick ? 1 : 0);
  std::printf("meta\tbuild\t0\t-\t0\t0\t0\t0\t0\t0\t0\t0\t%s\n", meta);

  if (want("clips") && !clips.empty()) {
    ClipSummary sum;
    BenchClips(clips, &sum);
    for (int v = 0; v < 2; ++v) {
      std::fprintf(stderr, "clips: %zu, %s, median of per-clip medians (ns/call):",
                   sum.fig[v][0].size(), v ? "optimized" : "raw");
      for (int p = 0; p < 6; ++p) std::fprintf(stderr, " %s %.0f", kPatternNames[p], Median(sum.fig[v][p]));
      std::fprintf(stderr, "\n");
    }
  }
  if (want("l2m")) BenchCrowd();
  if (want("skin")) {
    const Mesh gen = GenMesh(kSkinVertices, 96, kSkinInfluences);
    BenchSkin("skin_generated", "50000v_4inf_pos+nrm", gen, 1, kSkinMeasurements,
              "generated;runs_per_measurement=1;mesh50000");
    if (!fox.empty()) {
      const Mesh m = LoadMesh(fox);
      BenchSkin("skin_fox", std::to_string(m.vertices) + "v_4inf_pos+nrm", m, 20, 200,
                "Fox.glb;runs_per_measurement=20;palette=first_" + std::to_string(m.joints) +
                    ";cfmesh_body_fnv");
    }
  }
  if (want("xform")) BenchPoints();
  return 0;
}
