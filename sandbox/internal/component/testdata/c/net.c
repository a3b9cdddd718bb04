// A component making outbound HTTP requests through wasi:http's
// outgoing-handler, with the canonical ABI of the imports written by hand
// (no wit-bindgen is available offline). net.wit is its world; the WIT of
// wasi:http comes from jco's copy at build time (scripts/components.sh).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define TYPES "wasi:http/types@0.2.12"
#define STREAMS "wasi:io/streams@0.2.12"
#define POLL "wasi:io/poll@0.2.12"

typedef int32_t handle;

IMPORT(TYPES, "[constructor]fields") handle fields_new(void);
IMPORT(TYPES, "[constructor]outgoing-request") handle request_new(handle headers);
/* option<scheme>: is-some, the scheme's case, its string (other). */
IMPORT(TYPES, "[method]outgoing-request.set-scheme")
int32_t request_set_scheme(handle, int32_t some, int32_t tag, const char *p, size_t n);
IMPORT(TYPES, "[method]outgoing-request.set-authority")
int32_t request_set_authority(handle, int32_t some, const char *p, size_t n);
IMPORT(TYPES, "[method]outgoing-request.set-path-with-query")
int32_t request_set_path(handle, int32_t some, const char *p, size_t n);
IMPORT(TYPES, "[constructor]request-options") handle options_new(void);
IMPORT(TYPES, "[method]request-options.set-connect-timeout")
int32_t options_set_connect(handle, int32_t some, uint64_t ns);
IMPORT(TYPES, "[method]request-options.set-first-byte-timeout")
int32_t options_set_first_byte(handle, int32_t some, uint64_t ns);
IMPORT(TYPES, "[method]request-options.set-between-bytes-timeout")
int32_t options_set_between_bytes(handle, int32_t some, uint64_t ns);
IMPORT("wasi:http/outgoing-handler@0.2.12", "handle")
void outgoing_handle(handle req, int32_t some, handle opts, void *ret);
IMPORT(TYPES, "[method]future-incoming-response.subscribe") handle future_subscribe(handle);
IMPORT(TYPES, "[method]future-incoming-response.get") void future_get(handle, void *ret);
IMPORT(TYPES, "[method]incoming-response.status") int32_t response_status(handle);
IMPORT(TYPES, "[method]incoming-response.consume") void response_consume(handle, void *ret);
IMPORT(TYPES, "[method]incoming-body.stream") void body_stream(handle, void *ret);
IMPORT(STREAMS, "[method]input-stream.blocking-read") void stream_read(handle, uint64_t len, void *ret);
IMPORT(POLL, "[method]pollable.block") void pollable_block(handle);
IMPORT(STREAMS, "[resource-drop]input-stream") void drop_stream(handle);
IMPORT(POLL, "[resource-drop]pollable") void drop_pollable(handle);
IMPORT(TYPES, "[resource-drop]incoming-body") void drop_body(handle);
IMPORT(TYPES, "[resource-drop]incoming-response") void drop_response(handle);
IMPORT(TYPES, "[resource-drop]future-incoming-response") void drop_future(handle);

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size) {
	(void)old_size; (void)align;
	void *p = realloc(old, new_size ? new_size : 1);
	if (!p) abort();
	return p;
}

/* The cases of wasi:http/types.error-code, in WIT order. */
static const char *error_codes[] = {
	"DNS-timeout", "DNS-error", "destination-not-found", "destination-unavailable",
	"destination-IP-prohibited", "destination-IP-unroutable", "connection-refused",
	"connection-terminated", "connection-timeout", "connection-read-timeout",
	"connection-write-timeout", "connection-limit-reached", "TLS-protocol-error",
	"TLS-certificate-error", "TLS-alert-received", "HTTP-request-denied",
	"HTTP-request-length-required", "HTTP-request-body-size", "HTTP-request-method-invalid",
	"HTTP-request-URI-invalid", "HTTP-request-URI-too-long", "HTTP-request-header-section-size",
	"HTTP-request-header-size", "HTTP-request-trailer-section-size", "HTTP-request-trailer-size",
	"HTTP-response-incomplete", "HTTP-response-header-section-size", "HTTP-response-header-size",
	"HTTP-response-body-size", "HTTP-response-trailer-section-size", "HTTP-response-trailer-size",
	"HTTP-response-transfer-coding", "HTTP-response-content-coding", "HTTP-response-timeout",
	"HTTP-upgrade-failed", "HTTP-protocol-error", "loop-detected", "configuration-error",
	"internal-error",
};
enum { RESPONSE_BODY_SIZE = 28, INTERNAL_ERROR = 38 };

/* The result of get: result<string, string>. */
static struct { uint8_t tag; char *ptr; size_t len; } ret;

static void *fail(char *msg) {
	ret.tag = 1;
	ret.ptr = msg;
	ret.len = strlen(msg);
	return &ret;
}

/* describe names the error-code laid out at e (8-aligned: the case byte,
 * then its payload at 8) with the payloads this test reads. */
static char *describe(const uint8_t *e) {
	uint8_t c = e[0];
	char *s = malloc(160);
	if (c >= sizeof error_codes / sizeof *error_codes) {
		snprintf(s, 160, "error-code %u", c);
	} else if (c == INTERNAL_ERROR && e[8]) {
		const char *p = *(char *const *)(e + 12);
		size_t n = *(const size_t *)(e + 16);
		snprintf(s, 160, "%s: %.*s", error_codes[c], (int)n, p);
	} else if (c == RESPONSE_BODY_SIZE && e[8]) {
		snprintf(s, 160, "%s: %llu", error_codes[c], (unsigned long long)*(const uint64_t *)(e + 16));
	} else {
		snprintf(s, 160, "%s", error_codes[c]);
	}
	return s;
}

static _Alignas(8) uint8_t area[64];

EXPORT("get")
void *get(char *url, size_t n, uint32_t connect_ms, uint32_t first_byte_ms, uint32_t between_ms) {
	char *u = strndup(url, n);
	if (n) free(url);
	const char *prefix = "http://";
	if (strncmp(u, prefix, strlen(prefix)) != 0) {
		free(u);
		return fail(strdup("want an http:// URL"));
	}
	char *auth = u + strlen(prefix), *path = strchr(auth, '/');
	size_t auth_len = path ? (size_t)(path - auth) : strlen(auth);
	if (!path) path = "/";

	handle req = request_new(fields_new());
	request_set_scheme(req, 1, 0, NULL, 0);
	request_set_authority(req, 1, auth, auth_len);
	request_set_path(req, 1, path, strlen(path));
	free(u);
	handle opts = options_new();
	if (connect_ms) options_set_connect(opts, 1, (uint64_t)connect_ms * 1000000);
	if (first_byte_ms) options_set_first_byte(opts, 1, (uint64_t)first_byte_ms * 1000000);
	if (between_ms) options_set_between_bytes(opts, 1, (uint64_t)between_ms * 1000000);

	/* result<future-incoming-response, error-code>: payload at 8. */
	outgoing_handle(req, 1, opts, area);
	if (area[0]) return fail(describe(area + 8));
	handle fut = *(handle *)(area + 8);
	handle p = future_subscribe(fut);
	pollable_block(p);
	drop_pollable(p);
	/* option<result<result<incoming-response, error-code>>>: the outer
	 * result at 8, the inner at 16, its payload at 24. */
	future_get(fut, area);
	drop_future(fut);
	if (!area[0] || area[8]) return fail(strdup("response already taken"));
	if (area[16]) return fail(describe(area + 24));
	handle resp = *(handle *)(area + 24);
	int status = response_status(resp);

	response_consume(resp, area);
	if (area[0]) return fail(strdup("body already taken"));
	handle body = *(handle *)(area + 4);
	body_stream(body, area);
	if (area[0]) return fail(strdup("stream already taken"));
	handle in = *(handle *)(area + 4);

	size_t len = 0, cap = 64;
	char *out = malloc(cap);
	len = snprintf(out, cap, "%d ", status);
	for (;;) {
		/* result<list<u8>, stream-error>: the list or the error at 4;
		 * stream-error's case 1 is closed (the end of the body). */
		stream_read(in, 65536, area);
		if (area[0]) {
			if (area[4] == 1) break;
			free(out);
			drop_stream(in);
			drop_body(body);
			drop_response(resp);
			return fail(strdup("reading the body failed"));
		}
		uint8_t *p = *(uint8_t **)(area + 4);
		size_t m = *(size_t *)(area + 8);
		if (len + m > cap) {
			cap = (len + m) * 2;
			out = realloc(out, cap);
		}
		memcpy(out + len, p, m);
		len += m;
		free(p);
	}
	drop_stream(in);
	drop_body(body);
	drop_response(resp);
	ret.tag = 0;
	ret.ptr = out;
	ret.len = len;
	return &ret;
}

EXPORT("cabi_post_get") void post_get(void *r) { (void)r; free(ret.ptr); }
