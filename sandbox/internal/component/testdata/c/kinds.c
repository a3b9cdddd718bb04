// A component covering every WIT type kind (world.wit), with the canonical
// ABI written by hand: no wit-bindgen is available offline.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT(name) __attribute__((export_name(name)))

typedef struct { char *ptr; size_t len; } str;

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
	(void)old_size; (void)align;
	/* Never a fake pointer for size 0: callees free what they are given. */
	void *p = realloc(old, new_size ? new_size : 1);
	if (!p) abort();
	return p;
}

static str dup(const char *s, size_t n) {
	str r = { malloc(n ? n : 1), n };
	memcpy(r.ptr, s, n);
	return r;
}

static str cat3(const char *a, str b, const char *c) {
	size_t na = strlen(a), nc = strlen(c);
	str r = { malloc(na + b.len + nc + 1), na + b.len + nc };
	memcpy(r.ptr, a, na);
	memcpy(r.ptr + na, b.ptr, b.len);
	memcpy(r.ptr + na + b.len, c, nc);
	return r;
}

static str ret_str;

EXPORT("greet") str *greet(char *p, size_t n) {
	ret_str = cat3("¡hola, ", (str){ p, n }, "!");
	/* jco passes an empty string without calling cabi_realloc (the
	 * canonical ABI calls it for every string), so only a non-empty one
	 * is ours to free. */
	if (n) free(p);
	return &ret_str;
}

EXPORT("cabi_post_greet") void post_greet(str *r) { free(r->ptr); }

EXPORT("add") int64_t add(uint32_t a, int32_t b, uint32_t c, int64_t d, uint64_t e) {
	return (int64_t)(uint8_t)a + (int64_t)(int16_t)b + (int64_t)c + d + (int64_t)e;
}

static struct { double a; float b; } ret_floats;
EXPORT("swap-floats") void *swap_floats(float a, double b) {
	ret_floats.a = b;
	ret_floats.b = a;
	return &ret_floats;
}

static struct { uint32_t c; uint8_t b; } ret_char;
EXPORT("next-char") void *next_char(uint32_t c, uint32_t b) {
	ret_char.c = c + 1;
	ret_char.b = !b;
	return &ret_char;
}

static struct { str *ptr; size_t len; } ret_list;
EXPORT("reverse") void *reverse(str *xs, size_t n) {
	for (size_t i = 0; i < n / 2; i++) {
		str t = xs[i];
		xs[i] = xs[n - 1 - i];
		xs[n - 1 - i] = t;
	}
	ret_list.ptr = xs;
	ret_list.len = n;
	return &ret_list;
}

static struct { uint8_t some; uint32_t v; } ret_opt;
EXPORT("double") void *double_(uint32_t some, uint32_t v) {
	ret_opt.some = some;
	ret_opt.v = some ? v * 2 : 0;
	return &ret_opt;
}

static struct { uint8_t err; union { int32_t ok; str err; } u; } ret_result;
EXPORT("divide") void *divide(int32_t a, int32_t b) {
	if (b == 0) {
		ret_result.err = 1;
		ret_result.u.err = dup("division by zero", 16);
	} else {
		ret_result.err = 0;
		ret_result.u.ok = a / b;
	}
	return &ret_result;
}

EXPORT("sum17") uint32_t sum17(uint32_t *args) {
	uint32_t s = 0;
	for (int i = 0; i < 17; i++) s += args[i];
	return s;
}

EXPORT("read-file") void *read_file(char *p, size_t n) {
	char path[1024];
	if (n >= sizeof path) n = sizeof path - 1;
	memcpy(path, p, n);
	path[n] = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		ret_result.err = 1;
		ret_result.u.err = cat3("open: ", (str){ path, strlen(path) }, "");
		return &ret_result;
	}
	char buf[4096];
	size_t got = fread(buf, 1, sizeof buf, f);
	fclose(f);
	ret_result.err = 0;
	ret_result.u.err = dup(buf, got);
	return &ret_result;
}

static struct { uint64_t secs; uint8_t *ptr; size_t len; } ret_entropy;
EXPORT("entropy") void *entropy(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ret_entropy.secs = ts.tv_sec;
	ret_entropy.len = 16;
	ret_entropy.ptr = malloc(16);
	getentropy(ret_entropy.ptr, 16);
	return &ret_entropy;
}

static struct { uint8_t some; str s; } ret_optstr;
EXPORT("getenv") void *getenv_(char *p, size_t n) {
	char name[256];
	if (n >= sizeof name) n = sizeof name - 1;
	memcpy(name, p, n);
	name[n] = 0;
	const char *v = getenv(name);
	ret_optstr.some = v != NULL;
	if (v) ret_optstr.s = dup(v, strlen(v));
	return &ret_optstr;
}

EXPORT("nap") uint64_t nap(uint32_t ms) {
	struct timespec a, b, d = { ms / 1000, (long)(ms % 1000) * 1000000 };
	clock_gettime(CLOCK_MONOTONIC, &a);
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	// Signed: the nanoseconds go down when the nap crosses a second.
	return (uint64_t)((int64_t)(b.tv_sec - a.tv_sec) * 1000 + ((int64_t)b.tv_nsec - (int64_t)a.tv_nsec) / 1000000);
}

EXPORT("crash") void crash(void) {
	fprintf(stderr, "about to crash\n");
	__builtin_trap();
}

EXPORT("spin") void spin(void) {
	for (volatile int i = 0;; i++) {}
}

// hog keeps every block reachable, or the compiler would drop the
// allocations.
static void *volatile hoard;
EXPORT("hog") uint32_t hog(void) {
	uint32_t n = 0;
	for (;;) {
		void **p = malloc(1 << 20);
		if (!p) {
			fprintf(stderr, "out of memory after %u MiB\n", n);
			abort();
		}
		memset(p, 1, 1 << 20);
		*p = hoard;
		hoard = p;
		n++;
	}
	return n;
}

// interface mcphost:kinds/shapes

static struct { int32_t x, y; str label; } ret_point;
EXPORT("mcphost:kinds/shapes#echo-point") void *echo_point(int32_t x, int32_t y, char *p, size_t n) {
	ret_point.x = x + 1;
	ret_point.y = y + 1;
	ret_point.label = dup(p, n);
	return &ret_point;
}

EXPORT("mcphost:kinds/shapes#next-color") uint32_t next_color(uint32_t c) { return (c + 1) % 3; }

EXPORT("mcphost:kinds/shapes#toggle-exec") uint32_t toggle_exec(uint32_t p) { return p ^ 4; }

static struct { uint8_t tag; union { double r; struct { int32_t x, y; str label; } p; } u; } ret_shape;
EXPORT("mcphost:kinds/shapes#scale") void *scale(uint32_t tag, int64_t a, int32_t b, char *c, size_t d) {
	ret_shape.tag = tag;
	switch (tag) {
	case 0: {
		double r;
		memcpy(&r, &a, 8);
		ret_shape.u.r = r * 2;
		break;
	}
	case 1:
		ret_shape.u.p.x = (int32_t)a * 2;
		ret_shape.u.p.y = b * 2;
		ret_shape.u.p.label = dup(c, d);
		break;
	}
	return &ret_shape;
}
