// ClipForge: side-by-side benchmark harness for the ACL anchor (Animation Compression Library 2.1).
//
// Compiled against the ACL, RTM and sjson-cpp headers in ../shared/anchors-src (nothing of them is
// copied here). One TSV row per clip on stdout; the measurement patterns are specified in
// anchors/acl/README.md and must stay in sync with it (the Rust side reproduces them).
//
// Build (what scripts/bench_acl.sh does):
//   g++ -std=c++11 -O3 -DNDEBUG -m64 -msse4.1 -I $S/acl/includes -I $S/rtm/includes
//       -I $S/sjson-cpp/includes anchors/acl/acl_bench.cpp -o acl_bench
//
// Usage: acl_bench [options] CLIP.acl.sjson...   (acl_bench --help)

#include <acl/core/ansi_allocator.h>
#include <acl/core/compressed_tracks.h>
#include <acl/core/track_writer.h>
#include <acl/compression/compress.h>
#include <acl/compression/pre_process.h>
#include <acl/compression/transform_error_metrics.h>
#include <acl/decompression/decompress.h>
#include <acl/io/clip_reader.h>

#include <rtm/quatf.h>
#include <rtm/vector4f.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace
{
	// ---------------------------------------------------------------------------------------
	// Fixed parameters of the measurement patterns (README.md, "Patterns"). Change them only
	// together with the README and the Rust side.
	const uint32_t k_num_even_times = 100;			// T100: evenly spaced times over [0, D]
	const float k_playback_rate_hz = 60.0F;			// T60: forward playback
	const uint32_t k_num_seek_times = 1024;			// TSEEK: random times
	const uint64_t k_seek_seed = 0x00C11FF0E6EULL;	// SplitMix64 seed of TSEEK
	const uint32_t k_cold_copies = 220;				// cold: copies of the clip visited in turn
	const size_t k_flush_bytes = size_t(40) << 20;	// cold: cache flush buffer (40 MiB)
	const uint32_t k_min_calls_per_block = 256;		// warm: calls per timed block >= this
	const uint32_t k_warmup_blocks = 5;				// warm: untimed blocks before timing
	const uint32_t k_num_bones_list = 8;			// bones8: bones per call
	const size_t k_page = 4096;

	// Where a clip's child process is, for the message if it crashes (ACL segfaults on some inputs).
	const char* volatile g_clip_name = "";
	const char* volatile g_phase = "start";

	struct options
	{
		uint32_t rounds = 5;		// compression rounds (median)
		uint32_t blocks = 101;		// timed blocks per warm pattern (median)
		uint32_t passes = 101;		// timed passes of the cold pattern (median)
		bool preprocess = false;	// --preprocess: ACL's recommended lossy pre-processing first
		bool write_defaults = true;	// writer fills default sub-tracks (false: skipped, ACL's own bench)
		bool fork_per_clip = true;	// isolate each clip in a child process
		unsigned timeout_s = 900;	// per-clip limit (child only)
		std::string cpu_tsv;		// --cpu-tsv FILE: compression thread CPU times, one row per clip
	};

	typedef std::chrono::steady_clock clock_type;

	inline double elapsed_ns(clock_type::time_point a, clock_type::time_point b)
	{
		return double(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
	}

	// CPU time of this thread (excludes time the scheduler gave to other processes).
	double thread_cpu_ns()
	{
		timespec ts;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
	}

	// Keeps the compiler from dropping or sinking stores to memory behind `p`.
	inline void clobber(const void* p)
	{
		__asm__ __volatile__("" : : "r"(p) : "memory");
	}

	double median(std::vector<double> v)
	{
		if (v.empty())
			return std::nan("");
		std::sort(v.begin(), v.end());
		const size_t n = v.size();
		return (n % 2) != 0 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	}

	uint64_t splitmix64(uint64_t& state)
	{
		uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		return z ^ (z >> 31);
	}

	// ---------------------------------------------------------------------------------------
	// Output pose: structure of arrays, one 16-byte slot per bone in each of three arrays.
	struct soa_pose
	{
		rtm::quatf* rotations = nullptr;
		rtm::vector4f* translations = nullptr;
		rtm::vector4f* scales = nullptr;
		uint32_t num_bones = 0;

		explicit soa_pose(uint32_t n) : num_bones(n)
		{
			const size_t slots = std::max<uint32_t>(n, 1);
			void* r = nullptr;
			void* t = nullptr;
			void* s = nullptr;
			if (posix_memalign(&r, 64, slots * 16) != 0 || posix_memalign(&t, 64, slots * 16) != 0 || posix_memalign(&s, 64, slots * 16) != 0)
				std::abort();
			rotations = static_cast<rtm::quatf*>(r);
			translations = static_cast<rtm::vector4f*>(t);
			scales = static_cast<rtm::vector4f*>(s);
			for (size_t i = 0; i < slots; ++i)
			{
				rotations[i] = rtm::quat_identity();
				translations[i] = rtm::vector_zero();
				scales[i] = rtm::vector_set(1.0F);
			}
		}
		~soa_pose() { std::free(rotations); std::free(translations); std::free(scales); }
		soa_pose(const soa_pose&) = delete;
		soa_pose& operator=(const soa_pose&) = delete;

		double checksum() const
		{
			double sum = 0.0;
			for (uint32_t i = 0; i < num_bones; ++i)
				sum += double(rtm::quat_get_w(rotations[i])) + double(rtm::vector_get_x(translations[i])) + double(rtm::vector_get_z(scales[i]));
			return sum;
		}
	};

	// Writes every sub-track ACL outputs into the SoA pose. Default sub-tracks (those ACL stores
	// as "default"): written as identity rotation / zero translation / scale 1 when
	// write_defaults (acl::track_writer's own defaults: constant, constant, legacy), or not
	// written at all (skipped; what ACL's acl_decompressor writer does: the caller pre-fills).
	template<bool write_defaults>
	struct soa_pose_writer : public acl::track_writer
	{
		explicit soa_pose_writer(soa_pose& pose) : m_rotations(pose.rotations), m_translations(pose.translations), m_scales(pose.scales) {}

		static constexpr acl::default_sub_track_mode get_default_rotation_mode()
		{
			return write_defaults ? acl::default_sub_track_mode::constant : acl::default_sub_track_mode::skipped;
		}
		static constexpr acl::default_sub_track_mode get_default_translation_mode()
		{
			return write_defaults ? acl::default_sub_track_mode::constant : acl::default_sub_track_mode::skipped;
		}
		static constexpr acl::default_sub_track_mode get_default_scale_mode()
		{
			return write_defaults ? acl::default_sub_track_mode::legacy : acl::default_sub_track_mode::skipped;
		}

		void RTM_SIMD_CALL write_rotation(uint32_t track_index, rtm::quatf_arg0 rotation) { m_rotations[track_index] = rotation; }
		void RTM_SIMD_CALL write_translation(uint32_t track_index, rtm::vector4f_arg0 translation) { m_translations[track_index] = translation; }
		void RTM_SIMD_CALL write_scale(uint32_t track_index, rtm::vector4f_arg0 scale) { m_scales[track_index] = scale; }

		rtm::quatf* m_rotations;
		rtm::vector4f* m_translations;
		rtm::vector4f* m_scales;
	};

	typedef acl::decompression_context<acl::default_transform_decompression_settings> context_type;

	// ---------------------------------------------------------------------------------------
	// Time lists (README.md, "Times").
	struct time_lists
	{
		float duration = 0.0F;
		std::vector<float> even;	// T100
		std::vector<float> playback;	// T60
		std::vector<float> seek;	// TSEEK
	};

	time_lists make_time_lists(uint32_t num_samples, float sample_rate)
	{
		time_lists out;
		const float d = (num_samples > 1 && sample_rate > 0.0F) ? float(num_samples - 1) / sample_rate : 0.0F;
		out.duration = d;

		for (uint32_t j = 0; j < k_num_even_times; ++j)
			out.even.push_back(d * float(j) / float(k_num_even_times - 1));

		for (uint32_t k = 0;; ++k)
		{
			const float t = float(k) / k_playback_rate_hz;
			if (t > d)
				break;
			out.playback.push_back(t);
		}

		uint64_t state = k_seek_seed;
		for (uint32_t i = 0; i < k_num_seek_times; ++i)
		{
			const float u = float(splitmix64(state) >> 40) * (1.0F / 16777216.0F);	// [0, 1), 24 bits, exact
			out.seek.push_back(u * d);
		}
		return out;
	}

	// ---------------------------------------------------------------------------------------
	// Warm patterns: one context, calls going through `times` cyclically (the call counter runs
	// on across blocks), timed in blocks of whole passes (>= k_min_calls_per_block calls).
	struct warm_pattern
	{
		const std::vector<float>* times = nullptr;
		uint32_t calls_per_block = 0;
		uint64_t call_index = 0;
		std::vector<double> ns_per_call;	// one entry per timed block

		explicit warm_pattern(const std::vector<float>& t) : times(&t)
		{
			const uint32_t n = uint32_t(t.size());
			calls_per_block = n * ((k_min_calls_per_block + n - 1) / n);
		}
	};

	template<typename call_fn>
	void run_block(warm_pattern& p, call_fn& call, const soa_pose& pose, bool timed)
	{
		const std::vector<float>& times = *p.times;
		const uint64_t n = times.size();
		const clock_type::time_point t0 = clock_type::now();
		for (uint32_t c = 0; c < p.calls_per_block; ++c, ++p.call_index)
			call(p.call_index, times[p.call_index % n]);
		clobber(pose.rotations);
		const clock_type::time_point t1 = clock_type::now();
		if (timed)
			p.ns_per_call.push_back(elapsed_ns(t0, t1) / double(p.calls_per_block));
	}

	double quantile(std::vector<double> v, double q)
	{
		if (v.empty())
			return std::nan("");
		std::sort(v.begin(), v.end());
		return v[size_t(q * double(v.size() - 1) + 0.5)];
	}

	void flush_cache(std::vector<uint8_t>& buffer)
	{
		uint8_t* p = buffer.data();
		const size_t size = buffer.size();
		for (size_t i = 0; i < size; i += 64)
			p[i] = uint8_t(p[i] + uint8_t(i));
		clobber(p);
	}

	struct clip_result
	{
		uint32_t bones = 0;
		uint32_t samples = 0;
		uint32_t acl_bytes = 0;
		double compress_ms = 0.0;
		double pose_cold_ns = 0.0;
		double pose_warm_ns = 0.0;
		double playback_ns = 0.0;
		double seek_ns = 0.0;
		double bone_ns = std::nan("");
		double bones8_ns = std::nan("");
		double checksum = 0.0;
		std::vector<double> cold_samples;
	};

	template<bool write_defaults>
	void measure_decompression(const options& opt, const acl::compressed_tracks& compressed, const time_lists& times, clip_result& res)
	{
		acl::ansi_allocator allocator;
		const uint32_t num_bones = compressed.get_num_tracks();
		const acl::sample_rounding_policy rounding = acl::sample_rounding_policy::none;

		soa_pose pose(num_bones);
		soa_pose_writer<write_defaults> writer(pose);

		// --- cold full pose: k_cold_copies copies, each page aligned with its own context ----
		{
			const uint32_t size = compressed.get_size();
			const size_t stride = (size_t(size) + k_page - 1) / k_page * k_page;
			void* mega = nullptr;
			if (posix_memalign(&mega, k_page, stride * k_cold_copies) != 0)
				throw std::runtime_error("out of memory for the cold copies");
			std::vector<context_type*> contexts;
			for (uint32_t c = 0; c < k_cold_copies; ++c)
			{
				uint8_t* dst = static_cast<uint8_t*>(mega) + stride * c;
				std::memcpy(dst, &compressed, size);
				context_type* ctx = new context_type();
				if (!ctx->initialize(*reinterpret_cast<const acl::compressed_tracks*>(dst)))
					throw std::runtime_error("decompression_context::initialize failed");
				contexts.push_back(ctx);
			}

			std::vector<uint8_t> flush(k_flush_bytes, 1);
			std::vector<double> samples;
			const uint32_t n = uint32_t(times.even.size());
			uint64_t call_index = 0;
			for (uint32_t pass = 0; pass < 1 + opt.passes; ++pass)	// pass 0 is untimed (page faults)
			{
				flush_cache(flush);
				const clock_type::time_point t0 = clock_type::now();
				for (uint32_t c = 0; c < k_cold_copies; ++c, ++call_index)
				{
					context_type& ctx = *contexts[call_index % k_cold_copies];
					ctx.seek(times.even[call_index % n], rounding);
					ctx.decompress_tracks(writer);
				}
				clobber(pose.rotations);
				const clock_type::time_point t1 = clock_type::now();
				if (pass > 0)
					samples.push_back(elapsed_ns(t0, t1) / double(k_cold_copies));
			}
			res.pose_cold_ns = median(samples);
			res.cold_samples = samples;
			res.checksum += pose.checksum();

			for (context_type* ctx : contexts)
				delete ctx;
			std::free(mega);
		}

		// --- warm patterns: the original buffer, one context -----------------------------------
		context_type ctx;
		if (!ctx.initialize(compressed))
			throw std::runtime_error("decompression_context::initialize failed");

		auto pose_call = [&](uint64_t, float t)
		{
			ctx.seek(t, rounding);
			ctx.decompress_tracks(writer);
		};
		auto bone_call = [&](uint64_t call_index, float t)
		{
			ctx.seek(t, rounding);
			ctx.decompress_track(uint32_t(call_index % num_bones), writer);
		};
		std::vector<uint32_t> list;	// bones8: floor(j * num_bones / 8), j = 0..7, duplicates dropped
		for (uint32_t j = 0; j < k_num_bones_list && num_bones > 0; ++j)
		{
			const uint32_t b = uint32_t((uint64_t(j) * num_bones) / k_num_bones_list);
			if (list.empty() || list.back() != b)
				list.push_back(b);
		}
		auto bones8_call = [&](uint64_t, float t)
		{
			ctx.seek(t, rounding);
			for (uint32_t b : list)
				ctx.decompress_track(b, writer);
		};

		warm_pattern warm(times.even), playback(times.playback), seek(times.seek), bone(times.even), bones8(times.even);
		const bool has_bones = num_bones > 0;

		// Warm-up per pattern, then the timed blocks interleaved (one block of each pattern per
		// round) so that every pattern's median spans the same stretch of time on a busy machine.
		for (uint32_t round = 0; round < k_warmup_blocks + opt.blocks; ++round)
		{
			const bool timed = round >= k_warmup_blocks;
			run_block(warm, pose_call, pose, timed);
			run_block(playback, pose_call, pose, timed);
			run_block(seek, pose_call, pose, timed);
			if (has_bones)
			{
				run_block(bone, bone_call, pose, timed);
				run_block(bones8, bones8_call, pose, timed);
			}
		}
		res.pose_warm_ns = median(warm.ns_per_call);
		res.playback_ns = median(playback.ns_per_call);
		res.seek_ns = median(seek.ns_per_call);
		if (has_bones)
		{
			res.bone_ns = median(bone.ns_per_call);
			res.bones8_ns = median(bones8.ns_per_call);
		}
		res.checksum += pose.checksum();

		if (std::getenv("ACL_BENCH_VERBOSE") != nullptr)
		{
			const warm_pattern* ps[] = { &warm, &playback, &seek, &bone, &bones8 };
			const char* names[] = { "pose_warm", "playback", "seek", "bone", "bones8" };
			std::fprintf(stderr, "acl_bench: %s: spread (ns/call, p10 / median / p90): pose_cold %.1f / %.1f / %.1f (%zu calls per pass)", g_clip_name,
				quantile(res.cold_samples, 0.1), quantile(res.cold_samples, 0.5), quantile(res.cold_samples, 0.9), size_t(k_cold_copies));
			for (int i = 0; i < 5; ++i)
				if (!ps[i]->ns_per_call.empty())
					std::fprintf(stderr, "; %s %.1f / %.1f / %.1f (%u calls per block)", names[i], quantile(ps[i]->ns_per_call, 0.1),
						quantile(ps[i]->ns_per_call, 0.5), quantile(ps[i]->ns_per_call, 0.9), unsigned(ps[i]->calls_per_block));
			std::fprintf(stderr, "\n");
		}
	}

	std::string clip_name(const std::string& path)
	{
		std::string base = path;
		const size_t slash = base.find_last_of('/');
		if (slash != std::string::npos)
			base = base.substr(slash + 1);
		const std::string ext = ".acl.sjson";
		if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
			base.resize(base.size() - ext.size());
		return base;
	}

	bool read_whole_file(const std::string& path, std::vector<char>& out)
	{
		std::FILE* f = std::fopen(path.c_str(), "rb");
		if (f == nullptr)
			return false;
		char chunk[1 << 16];
		size_t got;
		while ((got = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
			out.insert(out.end(), chunk, chunk + got);
		const bool ok = std::ferror(f) == 0;
		std::fclose(f);
		return ok;
	}

	acl::itransform_error_metric* make_error_metric(acl::additive_clip_format8 format)
	{
		switch (format)
		{
		case acl::additive_clip_format8::relative: return new acl::additive_qvvf_transform_error_metric<acl::additive_clip_format8::relative>();
		case acl::additive_clip_format8::additive0: return new acl::additive_qvvf_transform_error_metric<acl::additive_clip_format8::additive0>();
		case acl::additive_clip_format8::additive1: return new acl::additive_qvvf_transform_error_metric<acl::additive_clip_format8::additive1>();
		default: return new acl::qvvf_transform_error_metric();
		}
	}


	void write_str(const char* s)
	{
		const size_t n = std::strlen(s);
		if (n > 0 && write(2, s, n) < 0)
			return;
	}

	void crash_handler(int sig)
	{
		write_str("acl_bench: ");
		write_str(g_clip_name);
		write_str(": crashed in ");
		write_str(g_phase);
		write_str("\n");
		std::signal(sig, SIG_DFL);
		std::raise(sig);
	}

	void install_crash_handlers()
	{
		const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
		for (int sig : sigs)
			std::signal(sig, crash_handler);
	}

	// Exit codes of a clip's child process.
	const int k_exit_ok = 0;
	const int k_exit_refused = 2;	// ACL (or the reader) returned an error
	const int k_exit_skipped = 4;	// not a transform clip (scalar track list)

	std::string fmt(double v, int decimals)
	{
		if (std::isnan(v))
			return "NA";
		char buf[64];
		std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
		return buf;
	}

	// Runs everything for one clip; prints its row. Returns one of the exit codes above.
	int run_clip(const options& opt, const std::string& path)
	{
		const std::string name = clip_name(path);
		g_clip_name = name.c_str();
		g_phase = "reading (clip_reader)";
		acl::ansi_allocator allocator;

		std::vector<char> text;
		if (!read_whole_file(path, text))
		{
			std::fprintf(stderr, "acl_bench: %s: cannot read %s\n", name.c_str(), path.c_str());
			return k_exit_refused;
		}

		acl::clip_reader reader(allocator, text.data(), text.size());
		const acl::sjson_file_type type = reader.get_file_type();
		if (type == acl::sjson_file_type::raw_track_list)
		{
			std::fprintf(stderr, "acl_bench: %s: skipped (scalar track list; this harness times transform clips only)\n", name.c_str());
			return k_exit_skipped;
		}
		if (type != acl::sjson_file_type::raw_clip)
		{
			std::fprintf(stderr, "acl_bench: %s: refused: not an ACL clip file\n", name.c_str());
			return k_exit_refused;
		}

		acl::sjson_raw_clip raw;
		if (!reader.read_raw_clip(raw))
		{
			const acl::clip_reader_error err = reader.get_error();
			std::fprintf(stderr, "acl_bench: %s: refused by clip_reader: line %u column %u: %s\n", name.c_str(),
				unsigned(err.line), unsigned(err.column), err.get_description());
			return k_exit_refused;
		}
		if (raw.has_settings)
			std::fprintf(stderr, "acl_bench: %s: note: the file's settings block is ignored (default settings used)\n", name.c_str());

		acl::track_array_qvvf& tracks = raw.track_list;
		acl::itransform_error_metric* metric = make_error_metric(raw.additive_format);

		clip_result res;
		res.bones = tracks.get_num_tracks();
		res.samples = tracks.get_num_samples_per_track();
		const float sample_rate = tracks.get_sample_rate();

		// ACL's recommended pre-processing (lossy, same error metric), once, not timed.
		if (opt.preprocess && !tracks.is_empty())
		{
			g_phase = "pre_process_track_list";
			acl::pre_process_settings_t pp;
			pp.actions = acl::pre_process_actions::recommended;
			pp.precision_policy = acl::pre_process_precision_policy::lossy;
			pp.error_metric = metric;
			if (raw.additive_format != acl::additive_clip_format8::none)
			{
				pp.additive_base = &raw.additive_base_track_list;
				pp.additive_format = raw.additive_format;
			}
			const acl::error_result r = acl::pre_process_track_list(allocator, pp, tracks);
			if (r.any())
			{
				std::fprintf(stderr, "acl_bench: %s: refused by pre_process_track_list: %s\n", name.c_str(), r.c_str());
				return k_exit_refused;
			}
		}

		acl::compression_settings settings = acl::get_default_compression_settings();
		settings.error_metric = metric;

		// Compression: R rounds, each timed around compress_track_list only.
		std::vector<double> round_ms;
		std::vector<double> round_cpu_ms;
		acl::compressed_tracks* compressed = nullptr;
		g_phase = "compress_track_list (default settings)";
		for (uint32_t round = 0; round < opt.rounds; ++round)
		{
			acl::output_stats stats;	// logging none: no error measurement inside
			acl::compressed_tracks* out = nullptr;
			const double c0 = thread_cpu_ns();
			const clock_type::time_point t0 = clock_type::now();
			const acl::error_result r = acl::compress_track_list(allocator, tracks, settings, raw.additive_base_track_list, raw.additive_format, out, stats);
			const clock_type::time_point t1 = clock_type::now();
			const double c1 = thread_cpu_ns();
			if (r.any() || out == nullptr)
			{
				std::fprintf(stderr, "acl_bench: %s: refused by compress_track_list: %s\n", name.c_str(), r.any() ? r.c_str() : "no output");
				return k_exit_refused;
			}
			round_ms.push_back(elapsed_ns(t0, t1) * 1e-6);
			round_cpu_ms.push_back((c1 - c0) * 1e-6);
			if (compressed == nullptr)
				compressed = out;
			else
			{
				if (out->get_size() != compressed->get_size() || std::memcmp(out, compressed, out->get_size()) != 0)
					std::fprintf(stderr, "acl_bench: %s: warning: round %u produced different bytes\n", name.c_str(), unsigned(round));
				allocator.deallocate(out, out->get_size());
			}
		}
		res.compress_ms = median(round_ms);
		res.acl_bytes = compressed->get_size();

		const acl::error_result valid = compressed->is_valid(true);
		if (valid.any())
		{
			std::fprintf(stderr, "acl_bench: %s: refused: compressed buffer invalid: %s\n", name.c_str(), valid.c_str());
			return k_exit_refused;
		}

		g_phase = "decompression";
		const time_lists times = make_time_lists(res.samples, sample_rate);
		if (opt.write_defaults)
			measure_decompression<true>(opt, *compressed, times, res);
		else
			measure_decompression<false>(opt, *compressed, times, res);

		std::printf("%s\t%u\t%u\t%u\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name.c_str(), unsigned(res.bones), unsigned(res.samples),
			unsigned(res.acl_bytes), fmt(res.compress_ms, 3).c_str(), fmt(res.pose_cold_ns, 1).c_str(), fmt(res.pose_warm_ns, 1).c_str(),
			fmt(res.playback_ns, 1).c_str(), fmt(res.seek_ns, 1).c_str(), fmt(res.bone_ns, 1).c_str(), fmt(res.bones8_ns, 1).c_str());
		std::fflush(stdout);
		if (std::getenv("ACL_BENCH_VERBOSE") != nullptr)
			std::fprintf(stderr, "acl_bench: %s: duration %.6f s, %zu playback calls, compress rounds %u: wall median %.3f ms (min %.3f), thread CPU median %.3f ms (min %.3f), pose checksum %.6f\n",
				name.c_str(), double(times.duration), times.playback.size(), unsigned(opt.rounds), median(round_ms),
				*std::min_element(round_ms.begin(), round_ms.end()), median(round_cpu_ms),
				*std::min_element(round_cpu_ms.begin(), round_cpu_ms.end()), res.checksum);

		if (!opt.cpu_tsv.empty())
		{
			std::FILE* f = std::fopen(opt.cpu_tsv.c_str(), "a");
			if (f == nullptr)
				std::fprintf(stderr, "acl_bench: %s: cannot append to %s\n", name.c_str(), opt.cpu_tsv.c_str());
			else
			{
				// Four decimals (0.1 us): a small clip's call takes 1-300 us, and the bench's
				// per-clip ratios must not be rounding.
				std::fprintf(f, "%s\t%s\t%s\t%s\t%s\n", name.c_str(), fmt(res.compress_ms, 4).c_str(),
					fmt(*std::min_element(round_ms.begin(), round_ms.end()), 4).c_str(), fmt(median(round_cpu_ms), 4).c_str(),
					fmt(*std::min_element(round_cpu_ms.begin(), round_cpu_ms.end()), 4).c_str());
				std::fclose(f);
			}
		}

		allocator.deallocate(compressed, compressed->get_size());
		delete metric;
		return k_exit_ok;
	}

	int run_clip_guarded(const options& opt, const std::string& path)
	{
		try
		{
			return run_clip(opt, path);
		}
		catch (const std::exception& e)
		{
			std::fprintf(stderr, "acl_bench: %s: refused: %s\n", clip_name(path).c_str(), e.what());
			return k_exit_refused;
		}
	}

	void usage(std::FILE* out)
	{
		std::fprintf(out,
			"usage: acl_bench [options] CLIP.acl.sjson...\n"
			"  --rounds N      compression rounds per clip, median reported (default 5)\n"
			"  --blocks N      timed blocks per warm decompression pattern (default 101)\n"
			"  --passes N      timed passes of 220 calls for the cold pattern (default 101)\n"
			"  --preprocess    run pre_process_track_list (recommended actions, lossy) before compressing;\n"
			"                  off by default, like acl_compressor (the recorded sizes match without it)\n"
			"  --skip-defaults writer skips default sub-tracks (ACL's own benchmark writer) instead of writing them\n"
			"  --no-fork       run clips in this process (a crash then ends the run)\n"
			"  --timeout S     per-clip time limit in seconds (default 900; forked mode only)\n"
			"  --no-header     do not print the header line\n"
			"  --cpu-tsv FILE  also write per clip: compress_ms (wall median), compress_min_ms (wall min),\n"
			"                  compress_cpu_ms / compress_cpu_min_ms (thread CPU time, median / min)\n"
			"  --print-times NUM_SAMPLES SAMPLE_RATE   print the time lists D, T100, T60, TSEEK and exit\n"
			"stdout: TSV, one row per clip that succeeded; stderr: skipped/refused/crashed clips.\n"
			"exit status: 0 all clips measured or skipped, 3 some clip refused or crashed, 1 usage error.\n");
	}

	bool parse_uint(const char* s, uint32_t& out)
	{
		char* end = nullptr;
		const unsigned long v = std::strtoul(s, &end, 10);
		if (end == s || *end != '\0' || v == 0 || v > 1000000)
			return false;
		out = uint32_t(v);
		return true;
	}
}

int main(int argc, char** argv)
{
	options opt;
	bool header = true;
	std::vector<std::string> files;
	for (int i = 1; i < argc; ++i)
	{
		const std::string a = argv[i];
		const bool has_value = i + 1 < argc;
		if (a == "--help" || a == "-h") { usage(stdout); return 0; }
		else if (a == "--print-times" && i + 2 < argc)
		{
			// Prints the time lists for NUM_SAMPLES at SAMPLE_RATE (to check another implementation).
			const time_lists t = make_time_lists(uint32_t(std::strtoul(argv[i + 1], nullptr, 10)), float(std::strtod(argv[i + 2], nullptr)));
			std::printf("D\t%.9g\n", double(t.duration));
			const std::vector<float>* lists[] = { &t.even, &t.playback, &t.seek };
			const char* names[] = { "T100", "T60", "TSEEK" };
			for (int l = 0; l < 3; ++l)
				for (size_t k = 0; k < lists[l]->size(); ++k)
					std::printf("%s\t%zu\t%.9g\n", names[l], k, double((*lists[l])[k]));
			return 0;
		}
		else if (a == "--rounds" && has_value) { if (!parse_uint(argv[++i], opt.rounds)) { usage(stderr); return 1; } }
		else if (a == "--blocks" && has_value) { if (!parse_uint(argv[++i], opt.blocks)) { usage(stderr); return 1; } }
		else if (a == "--passes" && has_value) { if (!parse_uint(argv[++i], opt.passes)) { usage(stderr); return 1; } }
		else if (a == "--timeout" && has_value) { uint32_t t; if (!parse_uint(argv[++i], t)) { usage(stderr); return 1; } opt.timeout_s = t; }
		else if (a == "--preprocess") opt.preprocess = true;
		else if (a == "--cpu-tsv" && has_value) opt.cpu_tsv = argv[++i];
		else if (a == "--skip-defaults") opt.write_defaults = false;
		else if (a == "--no-fork") opt.fork_per_clip = false;
		else if (a == "--no-header") header = false;
		else if (!a.empty() && a[0] == '-') { std::fprintf(stderr, "acl_bench: unknown option %s\n", a.c_str()); usage(stderr); return 1; }
		else files.push_back(a);
	}
	if (files.empty()) { usage(stderr); return 1; }

	if (!opt.cpu_tsv.empty())
	{
		std::FILE* f = std::fopen(opt.cpu_tsv.c_str(), "w");
		if (f == nullptr) { std::fprintf(stderr, "acl_bench: cannot write %s\n", opt.cpu_tsv.c_str()); return 1; }
		std::fprintf(f, "clip\tcompress_ms\tcompress_min_ms\tcompress_cpu_ms\tcompress_cpu_min_ms\n");
		std::fclose(f);
	}
	if (header)
		std::printf("clip\tbones\tsamples\tacl_bytes\tcompress_ms\tpose_cold_ns\tpose_warm_ns\tplayback_ns\tseek_ns\tbone_ns\tbones8_ns\n");
	std::fflush(stdout);

	uint32_t failed = 0;
	for (const std::string& path : files)
	{
		const std::string name = clip_name(path);
		if (!opt.fork_per_clip)
		{
			if (run_clip_guarded(opt, path) == k_exit_refused)
				++failed;
			continue;
		}

		std::fflush(stdout);
		std::fflush(stderr);
		const pid_t pid = fork();
		if (pid < 0)
		{
			std::perror("acl_bench: fork");
			return 1;
		}
		if (pid == 0)
		{
			install_crash_handlers();
			alarm(opt.timeout_s);
			const int code = run_clip_guarded(opt, path);
			std::fflush(stdout);
			std::fflush(stderr);
			_exit(code);
		}
		int status = 0;
		while (waitpid(pid, &status, 0) < 0)
		{
			if (errno != EINTR)
			{
				std::perror("acl_bench: waitpid");
				return 1;
			}
		}
		if (WIFSIGNALED(status))
		{
			const int sig = WTERMSIG(status);
			std::fprintf(stderr, "acl_bench: %s: CRASHED (signal %d, %s%s); no row written\n", name.c_str(), sig, strsignal(sig),
				sig == SIGALRM ? ": time limit" : "");
			++failed;
		}
		else if (WIFEXITED(status) && WEXITSTATUS(status) == k_exit_refused)
			++failed;
		else if (WIFEXITED(status) && WEXITSTATUS(status) != k_exit_ok && WEXITSTATUS(status) != k_exit_skipped)
		{
			std::fprintf(stderr, "acl_bench: %s: FAILED (exit status %d); no row written\n", name.c_str(), WEXITSTATUS(status));
			++failed;
		}
	}
	if (failed > 0)
		std::fprintf(stderr, "acl_bench: %u of %zu clips refused or crashed\n", unsigned(failed), files.size());
	return failed > 0 ? 3 : 0;
}
