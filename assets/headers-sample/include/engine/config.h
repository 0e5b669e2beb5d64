// Build configuration shared by every engine header.
#pragma once

#define ENGINE_VERSION_MAJOR 0
#define ENGINE_VERSION_MINOR 3

#ifndef ENGINE_MAX_ENTITIES
#define ENGINE_MAX_ENTITIES 4096
#endif

#if defined(ENGINE_DEBUG)
#define ENGINE_ASSERT(x) ((x) ? (void)0 : engine_assert_fail(#x, __FILE__, __LINE__))
void engine_assert_fail(const char *expr, const char *file, int line);
#else
#define ENGINE_ASSERT(x) ((void)0)
#endif
