#define A 3
#define F(x, y) ((x) * (y))
#define CAT(a, b) a ## b
#define AB 42
#define V(...) __VA_ARGS__
#define STR(x) #x
#if F(A, 2) == 6 && CAT(A, B) == 42 && defined(A) && !defined Z
#elif V(1, 2) == 2 || (1 ? 2 : 0) && -1 < 0u && 0x10 == 16 && 010 == 8 && 'A' == 65
#endif
#if __has_include("yes.h") && !__has_include(<no.h>) && __LINE__ > 0
#endif
#define HDR <vector>
#include HDR
#pragma push_macro("A")
#undef A
#pragma pop_macro("A")
#if 1 / 0 || 1'000 == 1000 || __cplusplus >= 201103L || __GNUC__ > 4
#endif
