/* Native tests of mcphost.h's JSON reader and writer and its call-frame
 * reader (built and run by ckit_test.go with the host's clang): the
 * helpers that take no imports. */
#include "../template/mcphost.h"

static int failures;

static void expect_str(const char *json, const char *path, const char *want) {
	mcp_json v = mcp_json_get((mcp_json){json, strlen(json)}, path);
	char *got = mcp_json_string(v, NULL);
	if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0)) {
		printf("FAIL %s @ %s: got %s; want %s\n", json, path, got ? got : "(null)", want ? want : "(null)");
		failures++;
	}
	free(got);
}

static void expect_raw(const char *json, const char *path, const char *want) {
	mcp_json v = mcp_json_get((mcp_json){json, strlen(json)}, path);
	if ((v.p == NULL) != (want == NULL) || (v.p && (v.n != strlen(want) || memcmp(v.p, want, v.n) != 0))) {
		printf("FAIL raw %s @ %s: got %.*s; want %s\n", json, path, (int)v.n, v.p ? v.p : "", want ? want : "(null)");
		failures++;
	}
}

static void expect_span(const char *what, const char *p, size_t n, const char *want) {
	size_t wn = want ? strlen(want) : 0;
	if ((p == NULL) != (want == NULL) || n != wn || (wn && memcmp(p, want, wn) != 0)) {
		printf("FAIL frame %s: got %.*s; want %s\n", what, (int)n, p ? p : "", want ? want : "(null)");
		failures++;
	}
}

/* frame_put appends a call frame's field: its length (little-endian
 * uint32) and its bytes, as abi.AppendCallFrame writes it. */
static size_t frame_put(char *dst, const char *s) {
	uint32_t n = (uint32_t)strlen(s);
	dst[0] = (char)n, dst[1] = (char)(n >> 8), dst[2] = (char)(n >> 16), dst[3] = (char)(n >> 24);
	memcpy(dst + 4, s, n);
	return 4 + n;
}

/* test_frame splits call frames with mcp_call_frame: every field where
 * abi.ParseCallFrame finds it, and every cut inside the five lengths and
 * their fields refused. */
static void test_frame(void) {
	char f[256];
	size_t n = 0;
	n += frame_put(f + n, "measure");
	n += frame_put(f + n, "7");
	n += frame_put(f + n, "{\"progressToken\":\"t\"}");
	n += frame_put(f + n, "2025-11-25");
	n += frame_put(f + n, "kc");
	size_t head = n;
	const char args[] = " {\"text\":\"hello world\"} ";
	memcpy(f + n, args, sizeof args - 1);
	n += sizeof args - 1;

	mcp_call c;
	if (!mcp_call_frame(f, n, &c)) {
		printf("FAIL frame: a whole frame refused\n");
		failures++;
		return;
	}
	expect_span("name", c.name.p, c.name.n, "measure");
	expect_span("id", c.id.p, c.id.n, "7");
	expect_span("meta", c.meta.p, c.meta.n, "{\"progressToken\":\"t\"}");
	expect_span("protocol version", c.protocol_version.p, c.protocol_version.n, "2025-11-25");
	expect_span("plugin", c.plugin.p, c.plugin.n, "kc");
	expect_span("arguments", c.arguments.p, c.arguments.n, args);
	if (!mcp_str_is(c.name, "measure") || mcp_str_is(c.name, "measur") || mcp_str_is(c.name, "measures")) {
		printf("FAIL mcp_str_is\n");
		failures++;
	}
	char *text = mcp_json_string(mcp_json_get(c.arguments, "text"), NULL);
	if (!text || strcmp(text, "hello world") != 0) {
		printf("FAIL frame arguments.text: got %s\n", text ? text : "(null)");
		failures++;
	}
	free(text);

	/* No arguments, no id, no _meta: absent spans, as in an envelope. */
	if (!mcp_call_frame(f, head, &c) || c.arguments.p != NULL || c.arguments.n != 0) {
		printf("FAIL frame without arguments\n");
		failures++;
	}
	char e[64];
	size_t en = 0;
	en += frame_put(e + en, "t");
	for (int i = 0; i < 4; i++) en += frame_put(e + en, "");
	if (!mcp_call_frame(e, en, &c) || c.id.p != NULL || c.meta.p != NULL || c.plugin.n != 0) {
		printf("FAIL frame with empty fields\n");
		failures++;
	}

	/* Every cut before the arguments is refused; a length past the end too. */
	for (size_t cut = 0; cut < head; cut++) {
		if (mcp_call_frame(f, cut, &c)) {
			printf("FAIL frame cut at %zu of %zu: accepted\n", cut, head);
			failures++;
		}
	}
	char big[8] = {(char)0xff, (char)0xff, (char)0xff, (char)0xff, 'x', 'y', 'z', 'w'};
	if (mcp_call_frame(big, sizeof big, &c)) {
		printf("FAIL frame: a 4 GiB length accepted\n");
		failures++;
	}
}

/* test_envelope reads call_tool envelopes into an mcp_call: the same
 * fields the frame gives, escaped strings decoded, absent ones empty. */
static void test_envelope(void) {
	const char *env = "{\"request\":{\"name\":\"measure\",\"arguments\":{\"text\":\"hello world\"}},"
	                  "\"context\":{\"id\":7,\"_meta\":{\"progressToken\":\"t\"},\"protocolVersion\":\"2025-11-25\",\"plugin\":\"k\\u0063\"}}";
	mcp_call c;
	char *owned[3] = {NULL, NULL, NULL};
	mcp__call_envelope((mcp_json){env, strlen(env)}, &c, owned);
	expect_span("envelope name", c.name.p, c.name.n, "measure");
	expect_span("envelope arguments", c.arguments.p, c.arguments.n, "{\"text\":\"hello world\"}");
	expect_span("envelope id", c.id.p, c.id.n, "7");
	expect_span("envelope meta", c.meta.p, c.meta.n, "{\"progressToken\":\"t\"}");
	expect_span("envelope protocol version", c.protocol_version.p, c.protocol_version.n, "2025-11-25");
	expect_span("envelope plugin (escaped)", c.plugin.p, c.plugin.n, "kc");
	if (owned[0] || owned[1] || !owned[2]) {
		printf("FAIL envelope: copies made of %d %d %d, want only the escaped plugin\n", !!owned[0], !!owned[1], !!owned[2]);
		failures++;
	}
	for (int i = 0; i < 3; i++) free(owned[i]);

	const char *bare = "{\"request\":{\"name\":\"t\"}}";
	char *none[3] = {NULL, NULL, NULL};
	mcp__call_envelope((mcp_json){bare, strlen(bare)}, &c, none);
	expect_span("bare name", c.name.p, c.name.n, "t");
	expect_span("bare arguments", c.arguments.p, c.arguments.n, NULL);
	expect_span("bare id", c.id.p, c.id.n, NULL);
	expect_span("bare plugin", c.plugin.p, c.plugin.n, "");
}

int main(void) {
	expect_str("{\"a\":\"x\"}", "a", "x");
	expect_str(" { \"b\" : 1 , \"a\" : { \"c\" : \"deep\" } } ", "a.c", "deep");
	expect_str("{\"a\":\"q\\\"\\\\\\/\\n\\t\\u00e9\\ud83d\\ude00\"}", "a", "q\"\\/\n\t\xc3\xa9\xf0\x9f\x98\x80");
	expect_str("{\"a\":\"\\ud800x\"}", "a", "\xef\xbf\xbdx"); /* a lone surrogate becomes U+FFFD */
	expect_str("{\"a\":\"\\x\"}", "a", NULL);                 /* bad escape */
	expect_str("{\"a\":\"\\u12\"}", "a", NULL);               /* short \u */
	expect_str("{\"a\":3}", "a", NULL);                       /* not a string */
	expect_str("{\"a\":\"x\"}", "b", NULL);                   /* absent */
	expect_str("{\"a\":\"x\"", "a", "x");                     /* lookup is lazy: a truncated object still yields a */
	expect_raw("{\"a\":[1,{\"b\":[]}],\"c\":true}", "c", "true");
	expect_raw("{\"a\":[1,{\"b\":[]}],\"c\":true}", "a", "[1,{\"b\":[]}]");
	expect_raw("{\"a\":[1,{\"b\":[]}],\"c\":true}", "", "{\"a\":[1,{\"b\":[]}],\"c\":true}");
	expect_raw("{\"a\":[1,", "a", NULL);
	expect_raw("[\"a\"]", "a", NULL);
	expect_raw("{\"a\":\"\x01\"}", "a", NULL); /* control character in a string */
	expect_raw("", "", NULL);

	char deep[2000];
	memset(deep, '[', sizeof deep - 1);
	deep[sizeof deep - 1] = 0;
	expect_raw(deep, "", NULL); /* too deep: refused, not a stack overflow */

	double d;
	mcp_json num = mcp_json_get((mcp_json){"{\"n\":-1.5e2}", 12}, "n");
	if (!mcp_json_number(num, &d) || d != -150) {
		printf("FAIL number: got %g\n", d);
		failures++;
	}
	if (mcp_json_number(mcp_json_get((mcp_json){"{\"n\":\"1\"}", 9}, "n"), &d)) {
		printf("FAIL number: a string parsed as a number\n");
		failures++;
	}

	mcp_buf b = {0};
	const char raw[] = "a\"b\\c\nd\x01";
	mcp_buf_json_string(&b, raw, sizeof raw - 1);
	if (strcmp(b.p, "\"a\\\"b\\\\c\\nd\\u0001\"") != 0) {
		printf("FAIL json_string: got %s\n", b.p);
		failures++;
	}
	char *back = mcp_json_string((mcp_json){b.p, b.len}, NULL);
	if (!back || strcmp(back, raw) != 0) {
		printf("FAIL round trip: got %s\n", back ? back : "(null)");
		failures++;
	}
	free(back);
	free(b.p);

	/* A long string written after other text, each byte a control
	 * character (2 or 6 bytes escaped) across several of the writer's
	 * stretches, then a quote and a plain tail: every byte comes back. */
	size_t ln = 3 * 4096 + 7;
	char *lraw = malloc(ln + 1);
	for (size_t i = 0; i < ln; i++) lraw[i] = (char)(1 + i % 31);
	lraw[ln - 7] = '"';
	memcpy(lraw + ln - 6, "tail!!", 6);
	lraw[ln] = 0;
	mcp_buf lb = {0};
	mcp_buf_puts(&lb, "x");
	mcp_buf_json_string(&lb, lraw, ln);
	size_t want = 1 + 2 + 2 + 6; /* x, the quotes, \" and the tail */
	for (size_t i = 0; i < ln - 7; i++) want += lraw[i] == '\n' || lraw[i] == '\r' || lraw[i] == '\t' ? 2 : 6;
	char *lback = lb.oom ? NULL : mcp_json_string((mcp_json){lb.p + 1, lb.len - 1}, NULL);
	if (lb.oom || lb.len != want || lb.len >= lb.cap || lb.p[lb.len] != 0 || !lback || strcmp(lback, lraw) != 0) {
		printf("FAIL long json_string: oom %d, length %zu (want %zu) of %zu, round trip %s\n", lb.oom, lb.len, want, lb.cap,
		       lback && strcmp(lback, lraw) == 0 ? "ok" : "differs");
		failures++;
	}
	free(lback);
	free(lb.p);
	free(lraw);

	/* base64, as the kv host function carries values */
	const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\x00\x80"};
	const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy", "/wCA"};
	for (int i = 0; i < 8; i++) {
		size_t pn = i == 7 ? 3 : strlen(plain[i]);
		mcp_buf e = {0};
		mcp_buf_base64(&e, plain[i], pn);
		if (e.len != strlen(enc[i]) || (e.len && memcmp(e.p, enc[i], e.len) != 0)) {
			printf("FAIL base64 %d: got %.*s; want %s\n", i, (int)e.len, e.p ? e.p : "", enc[i]);
			failures++;
		}
		free(e.p);
		size_t dn;
		char *d = mcp_base64_decode(enc[i], strlen(enc[i]), &dn);
		if (!d || dn != pn || memcmp(d, plain[i], pn) != 0) {
			printf("FAIL base64 decode %d\n", i);
			failures++;
		}
		free(d);
	}
	const char *bad[] = {"Zg=", "Z===", "Zg==Zg==", "Z!==", "=Zg="};
	for (int i = 0; i < 5; i++) {
		size_t dn;
		char *d = mcp_base64_decode(bad[i], strlen(bad[i]), &dn);
		if (d) {
			printf("FAIL base64 decode accepted %s\n", bad[i]);
			failures++;
			free(d);
		}
	}

	struct {
		int64_t v;
		const char *want;
	} ints[] = {{0, "0"}, {7, "7"}, {-7, "-7"}, {1234567890, "1234567890"},
	            {INT64_MAX, "9223372036854775807"}, {INT64_MIN, "-9223372036854775808"}};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		mcp_buf w = {0};
		mcp_buf_int(&w, ints[i].v);
		if (w.len != strlen(ints[i].want) || memcmp(w.p, ints[i].want, w.len) != 0) {
			printf("FAIL int %s: got %.*s\n", ints[i].want, (int)w.len, w.p ? w.p : "");
			failures++;
		}
		free(w.p);
	}
	mcp_buf u = {0};
	mcp_buf_uint(&u, UINT64_MAX);
	if (u.len != 20 || memcmp(u.p, "18446744073709551615", 20) != 0) {
		printf("FAIL uint max: got %.*s\n", (int)u.len, u.p ? u.p : "");
		failures++;
	}
	free(u.p);

	test_frame();
	test_envelope();

	if (failures == 0) printf("PASS\n");
	return failures != 0;
}
