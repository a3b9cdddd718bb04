// A component keeping state through wasi:keyvalue@0.2.0-draft (store and
// atomics), as components written for wasmCloud do: a counter, and the
// bucket's get, set, exists, delete and list-keys. The canonical ABI of
// the imports is written by hand (no wit-bindgen is available offline);
// kvcount.wit is its world.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define STORE "wasi:keyvalue/store@0.2.0-draft"
#define ATOMICS "wasi:keyvalue/atomics@0.2.0-draft"

typedef struct { char *ptr; size_t len; } str;

/* The variant error: its case (no-such-store 0, access-denied 1, other 2)
 * at 0 and other's string at 4. */
typedef struct { uint8_t kind; str s; } kv_error;

/* result<own<bucket>, error>: the case at 0, the payload at 4. */
typedef struct { uint8_t tag; union { int32_t bucket; kv_error err; } u; } open_ret;
/* result<option<list<u8>>, error>. */
typedef struct { uint8_t tag; union { struct { uint8_t some; str v; } ok; kv_error err; } u; } get_ret;
/* result<_, error> and result<bool, error>. */
typedef struct { uint8_t tag; union { uint8_t b; kv_error err; } u; } unit_ret;
/* result<key-response, error>, aligned to 8 for the cursor's u64. */
typedef struct { uint8_t tag; union { struct { str *keys; size_t n; uint8_t more; uint64_t cursor; } ok; kv_error err; } u; } keys_ret;
/* result<u64, error>. */
typedef struct { uint8_t tag; union { uint64_t n; kv_error err; } u; } incr_ret;

IMPORT(STORE, "open") void kv_open(const char *p, size_t n, open_ret *ret);
IMPORT(STORE, "[resource-drop]bucket") void kv_drop(int32_t bucket);
IMPORT(STORE, "[method]bucket.get") void kv_get(int32_t b, const char *p, size_t n, get_ret *ret);
IMPORT(STORE, "[method]bucket.set") void kv_set(int32_t b, const char *p, size_t n, const char *vp, size_t vn, unit_ret *ret);
IMPORT(STORE, "[method]bucket.delete") void kv_delete(int32_t b, const char *p, size_t n, unit_ret *ret);
IMPORT(STORE, "[method]bucket.exists") void kv_exists(int32_t b, const char *p, size_t n, unit_ret *ret);
IMPORT(STORE, "[method]bucket.list-keys") void kv_list_keys(int32_t b, int32_t has, int64_t cursor, keys_ret *ret);
IMPORT(ATOMICS, "increment") void kv_increment(int32_t b, const char *p, size_t n, int64_t delta, incr_ret *ret);

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

static void *answerf(int err, const char *fmt, const char *a, size_t an) {
	char *out = malloc(an + 64);
	int n = snprintf(out, an + 64, fmt, (int)an, a);
	return answer(err, out, n);
}

/* The error e as text: its case, and other's message. */
static void *fail(const char *op, kv_error e) {
	static const char *kinds[] = {"no-such-store", "access-denied", "other"};
	char *out = malloc(64 + e.s.len);
	int n = snprintf(out, 64 + e.s.len, "%s: %s", op, kinds[e.kind < 3 ? e.kind : 2]);
	if (e.kind == 2) {
		n += snprintf(out + n, 64 + e.s.len - n, ": %.*s", (int)e.s.len, e.s.ptr);
		if (e.s.len) free(e.s.ptr);
	}
	return answer(1, out, n);
}

static int32_t open_default(kv_error *err) {
	open_ret r;
	kv_open("default", 7, &r);
	if (r.tag) {
		*err = r.u.err;
		return -1;
	}
	return r.u.bucket;
}

EXPORT("open-store") void *open_store(char *p, size_t n) {
	open_ret r;
	kv_open(p, n, &r);
	if (r.tag) return fail("open", r.u.err);
	kv_drop(r.u.bucket);
	return answer(0, strdup("opened"), 6);
}

EXPORT("count") void *count(char *p, size_t n) {
	kv_error e;
	int32_t b = open_default(&e);
	if (b < 0) return fail("open", e);
	incr_ret r;
	kv_increment(b, p, n, 1, &r);
	kv_drop(b);
	if (r.tag) return fail("increment", r.u.err);
	char *out = malloc(24);
	return answer(0, out, snprintf(out, 24, "%llu", (unsigned long long)r.u.n));
}

EXPORT("put") void *put(char *p, size_t n, char *vp, size_t vn) {
	kv_error e;
	int32_t b = open_default(&e);
	if (b < 0) return fail("open", e);
	unit_ret u;
	kv_set(b, p, n, vp, vn, &u);
	if (u.tag) { kv_drop(b); return fail("set", u.u.err); }
	get_ret g;
	kv_get(b, p, n, &g);
	if (g.tag) { kv_drop(b); return fail("get", g.u.err); }
	kv_exists(b, p, n, &u);
	kv_drop(b);
	if (u.tag) return fail("exists", u.u.err);
	if (!g.u.ok.some) return answer(1, strdup("get: none after set"), 19);
	char *out = malloc(g.u.ok.v.len + 32);
	int m = snprintf(out, g.u.ok.v.len + 32, "%.*s exists=%d", (int)g.u.ok.v.len, g.u.ok.v.ptr, u.u.b);
	if (g.u.ok.v.len) free(g.u.ok.v.ptr);
	return answer(0, out, m);
}

EXPORT("remove") void *remove_key(char *p, size_t n) {
	kv_error e;
	int32_t b = open_default(&e);
	if (b < 0) return fail("open", e);
	unit_ret u;
	kv_delete(b, p, n, &u);
	if (u.tag) { kv_drop(b); return fail("delete", u.u.err); }
	kv_exists(b, p, n, &u);
	kv_drop(b);
	if (u.tag) return fail("exists", u.u.err);
	return answerf(0, "%.*s", u.u.b ? "exists=1" : "exists=0", 8);
}

EXPORT("keys") void *keys(void) {
	kv_error e;
	int32_t b = open_default(&e);
	if (b < 0) return fail("open", e);
	size_t cap = 256, len = 0;
	char *out = malloc(cap);
	int32_t has = 0;
	uint64_t cursor = 0;
	do {
		keys_ret r;
		kv_list_keys(b, has, (int64_t)cursor, &r);
		if (r.tag) { kv_drop(b); free(out); return fail("list-keys", r.u.err); }
		for (size_t i = 0; i < r.u.ok.n; i++) {
			str k = r.u.ok.keys[i];
			if (len + k.len + 1 > cap) { cap = 2 * (len + k.len + 1); out = realloc(out, cap); }
			memcpy(out + len, k.ptr, k.len);
			len += k.len;
			out[len++] = '\n';
			if (k.len) free(k.ptr);
		}
		if (r.u.ok.n) free(r.u.ok.keys);
		has = r.u.ok.more;
		cursor = r.u.ok.cursor;
	} while (has);
	kv_drop(b);
	return answer(0, out, len);
}
