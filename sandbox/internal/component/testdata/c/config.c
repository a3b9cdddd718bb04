// A component reading wasi:config/store (get and get-all), as wassette's
// components read the keys a policy's environment.allow grants, and
// logging through wasi:logging. The
// canonical ABI of the imports is written by hand (no wit-bindgen is
// available offline); config.wit is its world.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define STORE "wasi:config/store@0.2.0-draft"

typedef struct { char *ptr; size_t len; } str;

/* A string or list of length 0 may come without an allocation. */
static void release(void *p, size_t n) { if (n) free(p); }

/* result<option<string>, config-error>: the result's case at 0, then at 4
 * the option's (or the error's) case and at 8 its string. */
typedef struct { uint8_t tag, _pad[3]; uint8_t inner, _pad2[3]; str s; } get_ret;
/* result<list<tuple<string, string>>, config-error>: the case at 0; the
 * list at 4, or the error's case at 4 and its string at 8. */
typedef struct { uint8_t tag; union { struct { str *pairs; size_t n; } ok; struct { uint8_t inner; str s; } err; } u; } all_ret;

IMPORT(STORE, "get") void store_get(const char *p, size_t n, get_ret *ret);
IMPORT(STORE, "get-all") void store_get_all(all_ret *ret);
/* level is the enum's case: trace 0 … info 2 … critical 5. */
IMPORT("wasi:logging/logging", "log")
void logging_log(int32_t level, const char *cp, size_t cn, const char *mp, size_t mn);

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
	(void)old_size; (void)align;
	void *p = realloc(old, new_size ? new_size : 1);
	if (!p) abort();
	return p;
}

/* The result of each export: result<string, string>. */
static struct { uint8_t tag; str s; } ret;

static void *answer(int err, char *p, size_t n) {
	ret.tag = err;
	ret.s.ptr = p;
	ret.s.len = n;
	return &ret;
}

static void *config_error(uint8_t inner, str s) {
	const char *kind = inner ? "io: " : "upstream: ";
	size_t k = strlen(kind);
	char *out = malloc(k + s.len + 1);
	memcpy(out, kind, k);
	memcpy(out + k, s.ptr, s.len);
	release(s.ptr, s.len);
	return answer(1, out, k + s.len);
}

EXPORT("config-get") void *config_get(char *p, size_t n) {
	get_ret r;
	logging_log(2, "config", 6, p, n);
	store_get(p, n, &r);
	release(p, n);
	if (r.tag) return config_error(r.inner, r.s);
	if (!r.inner) {
		char *msg = strdup("not set");
		return answer(1, msg, strlen(msg));
	}
	return answer(0, r.s.ptr, r.s.len);
}

EXPORT("config-all") void *config_all(void) {
	all_ret r;
	store_get_all(&r);
	if (r.tag) return config_error(r.u.err.inner, r.u.err.s);
	size_t len = 0;
	for (size_t i = 0; i < r.u.ok.n; i++) len += r.u.ok.pairs[2 * i].len + r.u.ok.pairs[2 * i + 1].len + 2;
	char *out = malloc(len + 1), *w = out;
	for (size_t i = 0; i < r.u.ok.n; i++) {
		str k = r.u.ok.pairs[2 * i], v = r.u.ok.pairs[2 * i + 1];
		memcpy(w, k.ptr, k.len), w += k.len, *w++ = '=';
		memcpy(w, v.ptr, v.len), w += v.len, *w++ = '\n';
		release(k.ptr, k.len), release(v.ptr, v.len);
	}
	release(r.u.ok.pairs, r.u.ok.n);
	return answer(0, out, len);
}

EXPORT("cabi_post_config-get") void post_get(void *r) { (void)r; release(ret.s.ptr, ret.s.len); }
EXPORT("cabi_post_config-all") void post_all(void *r) { (void)r; free(ret.s.ptr); }
