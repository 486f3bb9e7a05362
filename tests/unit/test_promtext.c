/*
 * test_promtext.c - the text writers of the viewers: the growing buffer and its
 * XML escaping (src/core/outbuf.c), Prometheus' text format
 * (src/core/promtext.c), where the exporter listens (src/core/listen.c), and
 * which of its connections it closes (src/core/conns.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "check.h"
#include "core/conns.h"
#include "core/promtext.h"
#include "core/listen.h"
#include "core/outbuf.h"

static void test_outbuf(void)
{
	struct nvt_outbuf b = {0};
	char big[10000];

	CHECK(nvt_outbuf_printf(&b, "%s=%d", "a", 1) == 0);
	CHECK_STR(b.text, "a=1");
	/* Past the first allocation: the text is whole. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(nvt_outbuf_printf(&b, "%s", big) == 0);
	CHECK(b.len == 3 + sizeof(big) - 1 && strlen(b.text) == b.len);
	nvt_outbuf_reset(&b);
	CHECK(b.len == 0 && b.text[0] == '\0');
	/* XML: the five characters escaped, controls as spaces, broken UTF-8 as U+FFFD. */
	CHECK(nvt_outbuf_xml(&b, "<a href=\"x\">&'\x01\xff\xc3\xa9</a>") == 0);
	CHECK_STR(b.text, "&lt;a href=&quot;x&quot;&gt;&amp;&apos; \xef\xbf\xbd\xc3\xa9&lt;/a&gt;");
	nvt_outbuf_reset(&b);
	CHECK(nvt_outbuf_xml(&b, "") == 0 && b.text && b.text[0] == '\0');
	nvt_outbuf_free(&b);
	CHECK(b.text == NULL && b.len == 0);
}

static void test_utf8(void)
{
	CHECK(nvt_utf8_len("a", 1) == 1);
	CHECK(nvt_utf8_len("\xc3\xa9", 2) == 2);
	CHECK(nvt_utf8_len("\xc3\xa9", 1) == 0);       /* cut short */
	CHECK(nvt_utf8_len("\xc0\xaf", 2) == 0);       /* overlong '/' */
	CHECK(nvt_utf8_len("\xe0\x80\xaf", 3) == 0);   /* overlong, three bytes */
	CHECK(nvt_utf8_len("\xed\xa0\x80", 3) == 0);   /* a surrogate */
	CHECK(nvt_utf8_len("\xf4\x90\x80\x80", 4) == 0); /* past U+10FFFF */
	CHECK(nvt_utf8_len("\xf0\x9f\x98\x80", 4) == 4);
	CHECK(nvt_utf8_len("\x80", 1) == 0);           /* a stray continuation byte */
	CHECK(nvt_utf8_len("\xe2\x82", 3) == 0);       /* not continued */
}

/* The one rule of what text from tasks may go out as it is (nvt_utf8_shown). */
static void test_shown(void)
{
	static const struct {
		const char *s;
		size_t len;
		int shown;
	} cases[] = {
		{"a", 1, 1},	      {" ", 1, 1},	      {"~", 1, 1},
		{"\xc3\xa9", 2, 1},     {"\xe2\x80\xa9", 3, 1}, {"\xf0\x9f\x98\x80", 4, 1},
		{"\x1b", 1, 0},	      {"\x07", 1, 0},	      {"\n", 1, 0},
		{"\t", 1, 0},	      {"\x7f", 1, 0},	      {"\xc2\x80", 2, 0},
		{"\xc2\x9b", 2, 0},     {"\xc2\x9f", 2, 0},     {"\xc2\xa0", 2, 1},
		{"\xe2\x80\xaa", 3, 0}, {"\xe2\x80\xae", 3, 0}, {"\xe2\x81\xa6", 3, 0},
		{"\xe2\x81\xa9", 3, 0}, {"\xe2\x81\xaa", 3, 1}, {"\x9b", 1, 0},
		{"\xff", 1, 0},	      {"\xc3", 1, 0},
	};
	int shown;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t k = nvt_utf8_shown(cases[i].s, strlen(cases[i].s), &shown);
		if (k != cases[i].len || shown != cases[i].shown)
			fprintf(stderr, "case %zu: length %zu shown %d\n", i, k, shown);
		CHECK(k == cases[i].len && shown == cases[i].shown);
	}
	CHECK(nvt_utf8_shown("", 0, &shown) == 0);
}

static void test_promtext(void)
{
	struct nvt_outbuf b = {0};
	struct nvt_prom_label l[2] = {{"user", "a\"b\\c\nd\xff"}, {"gpu", "0"}};

	CHECK(nvt_prom_name_ok("nvtaskset_task_tpcs") && nvt_prom_name_ok("a:b_c9"));
	CHECK(!nvt_prom_name_ok("9a") && !nvt_prom_name_ok("a-b") && !nvt_prom_name_ok(""));
	CHECK(nvt_prom_label_ok("UUID") && !nvt_prom_label_ok("__name") && !nvt_prom_label_ok("a:b"));
	CHECK(nvt_prom_family(&b, "x_total", "counter", "Kernels\\launched\nin all.") == 0);
	CHECK_STR(b.text, "# HELP x_total Kernels\\\\launched\\nin all.\n# TYPE x_total counter\n");
	nvt_outbuf_reset(&b);
	CHECK(nvt_prom_family(&b, "x", "histogram", "no") == -1); /* not a type it writes */
	CHECK(nvt_prom_family(&b, "x-y", "gauge", "no") == -1);
	nvt_outbuf_reset(&b);
	/* Label values: backslash, quote and newline escaped; bytes not UTF-8 as U+FFFD. */
	CHECK(nvt_prom_sample(&b, "x", l, 2, 3) == 0);
	CHECK_STR(b.text, "x{user=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",gpu=\"0\"} 3\n");
	nvt_outbuf_reset(&b);
	/* What a terminal acts on goes out as '?', as -l and top show it: ESC (a window title
	 * by OSC 0, the clipboard by OSC 52), BEL, DEL, C1 as UTF-8 (U+009B, CSI), a
	 * text-direction override (U+202E); the help text's too. Text around them stays. */
	l[0].value = "a\x1b]0;t\x07" "b\x1b]52;c;eA==\x07\x7f\xc2\x9b" "2J\xe2\x80\xaex\xc3\xa9\t";
	CHECK(nvt_prom_sample(&b, "x", l, 1, 1) == 0);
	CHECK_STR(b.text, "x{user=\"a?]0;t?b?]52;c;eA==???2J?x\xc3\xa9?\"} 1\n");
	nvt_outbuf_reset(&b);
	CHECK(nvt_prom_family(&b, "x", "gauge", "h\x1b[2J\xc2\x9d") == 0);
	CHECK_STR(b.text, "# HELP x h?[2J?\n# TYPE x gauge\n");
	nvt_outbuf_reset(&b);
	CHECK(nvt_prom_sample(&b, "x", NULL, 0, 0.5) == 0);
	CHECK_STR(b.text, "x 0.5\n");
	nvt_outbuf_reset(&b);
	l[0].name = "bad-name";
	CHECK(nvt_prom_sample(&b, "x", l, 1, 1) == -1);
	/* Values: integers exact to 2^53, others read back the same, NaN and infinities. */
	nvt_outbuf_reset(&b);
	nvt_prom_value(&b, 9007199254740992.0);
	CHECK_STR(b.text, "9007199254740992");
	nvt_outbuf_reset(&b);
	nvt_prom_value(&b, 0.1);
	CHECK(strtod(b.text, NULL) == 0.1 && strlen(b.text) <= 19);
	nvt_outbuf_reset(&b);
	nvt_prom_value(&b, 1e300);
	CHECK(strtod(b.text, NULL) == 1e300);
	nvt_outbuf_reset(&b);
	nvt_prom_value(&b, NAN);
	nvt_prom_value(&b, INFINITY);
	nvt_prom_value(&b, -INFINITY);
	nvt_prom_value(&b, -0.0);
	nvt_prom_value(&b, -12);
	CHECK_STR(b.text, "NaN+Inf-Inf0-12");
	nvt_outbuf_free(&b);
}

static void listen_ok(const char *text, int family, const char *host, unsigned port)
{
	struct nvt_listen at;
	char why[200] = "";

	CHECK(nvt_listen_parse(text, &at, why, sizeof(why)) == 0);
	CHECK(at.family == family);
	CHECK_STR(at.host, host);
	CHECK(at.port == port);
}

static void listen_bad(const char *text, const char *reason)
{
	struct nvt_listen at;
	char why[200] = "";

	CHECK(nvt_listen_parse(text, &at, why, sizeof(why)) == -1);
	if (!strstr(why, reason))
		fprintf(stderr, "'%s': why '%s' lacks '%s'\n", text ? text : "(null)", why, reason);
	CHECK(strstr(why, reason) != NULL);
}

static void test_listen(void)
{
	struct nvt_listen at;
	char why[200];

	listen_ok("9433", AF_INET, "127.0.0.1", 9433); /* loopback unless told */
	listen_ok("0", AF_INET, "127.0.0.1", 0);
	listen_ok("localhost:80", AF_INET, "127.0.0.1", 80);
	listen_ok("0.0.0.0:65535", AF_INET, "0.0.0.0", 65535);
	listen_ok("[::1]:9433", AF_INET6, "[::1]", 9433);
	listen_ok("[::]:1", AF_INET6, "[::]", 1);
	nvt_listen_parse("10.1.2.3:7", &at, why, sizeof(why));
	CHECK(at.addr[0] == 10 && at.addr[3] == 3);
	listen_bad("", "no port");
	listen_bad(NULL, "no port");
	listen_bad("65536", "no port");
	listen_bad("-1", "no port");
	listen_bad("+80", "no port");
	listen_bad("80 ", "no port");
	listen_bad("host.example:80", "names are not looked up");
	listen_bad("::1:80", "in brackets");
	listen_bad("[::1]80", "[ADDR]:PORT");
	listen_bad("[127.0.0.1]:80", "no IP address");
	listen_bad(":80", "no address before");
	listen_bad("1.2.3.4.5:80", "no IP address");
	listen_bad("[::1]:", "no port");
}

/* The exporter's connections: a head's deadline that bytes do not extend, the oldest (whose head
 * or answer began longest ago) closed for room, per address first. */
static void test_conns(void)
{
	static struct nvt_conns t;
	const uint8_t a[16] = {127, 0, 0, 2}, b[16] = {10, 0, 0, 2}, b6[16] = {10, 0, 0, 2, 1};
	const uint8_t lo[16] = {127, 0, 0, 1}, lo6[16] = {[15] = 1},
		      mapped[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};

	CHECK(nvt_conns_shared_address(AF_INET, lo) && nvt_conns_shared_address(AF_INET6, lo6) &&
	      nvt_conns_shared_address(AF_INET6, mapped));
	CHECK(!nvt_conns_shared_address(AF_INET, a) && !nvt_conns_shared_address(AF_INET6, a) &&
	      !nvt_conns_shared_address(AF_INET, b6));

	nvt_conns_init(&t, 4, 2, 100);
	CHECK(nvt_conns_admit(&t, AF_INET, a) == -1 && nvt_conns_add(&t, 10, AF_INET, a, 1000) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET, a) == -1 && nvt_conns_add(&t, 11, AF_INET, a, 1001) == 0);
	/* A third from a: a's oldest (10) closes first; b and another family are others. */
	CHECK(nvt_conns_admit(&t, AF_INET, a) == 10);
	CHECK(nvt_conns_live(&t) == 1);
	CHECK(nvt_conns_add(&t, 12, AF_INET, a, 1002) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET, b) == -1 && nvt_conns_add(&t, 20, AF_INET, b, 1003) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET6, b6) == -1 && nvt_conns_add(&t, 30, AF_INET6, b6, 1004) == 0);
	nvt_conns_remove(&t, 10); /* (gone: its slot free) */
	CHECK(t.n == 4 && nvt_conns_live(&t) == 4);
	/* Full (4): the oldest of all; 11's answer began after the others' heads. */
	nvt_conns_answering(&t, 11, 1, 1005);
	CHECK(nvt_conns_admit(&t, AF_INET6, (const uint8_t[16]){1}) == 12);
	nvt_conns_remove(&t, 12);
	CHECK(nvt_conns_add(&t, 40, AF_INET, (const uint8_t[16]){9}, 1006) == 0);
	/* Deadlines: heads of 100 ns from their start, bytes or not; one being answered has none,
	 * and its next head's time begins when its response is done. */
	CHECK(nvt_conns_expired(&t, 1100) == -1);
	CHECK(nvt_conns_expired(&t, 1104) == 20);
	CHECK(nvt_conns_expired(&t, 1104) == -1);
	CHECK(nvt_conns_expired(&t, 1105) == 30);
	nvt_conns_answering(&t, 11, 0, 2000);
	CHECK(nvt_conns_expired(&t, 2000) == 40);
	CHECK(nvt_conns_expired(&t, 2100) == -1 && nvt_conns_expired(&t, 2101) == 11);
	/* Every one being answered: the one answered longest closes for a newcomer (a client that
	 * does not read its answer holds no room by it). */
	nvt_conns_init(&t, 2, 2, 100);
	CHECK(nvt_conns_add(&t, 5, AF_INET, a, 0) == 0 && nvt_conns_add(&t, 6, AF_INET, a, 1) == 0);
	nvt_conns_answering(&t, 6, 1, 2);
	nvt_conns_answering(&t, 5, 1, 3);
	CHECK(nvt_conns_admit(&t, AF_INET, b) == 6 && nvt_conns_admit(&t, AF_INET, b) == -1);
	/* 127.0.0.1 has no per-address limit: only the table's. */
	nvt_conns_init(&t, 3, 1, 100);
	CHECK(nvt_conns_add(&t, 5, AF_INET, lo, 0) == 0 && nvt_conns_add(&t, 6, AF_INET, lo, 1) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET, lo) == -1 && nvt_conns_add(&t, 7, AF_INET, lo, 2) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET, lo) == 5);
	/* Admitted at once (two threads, each before the other's was added): both fit a's
	 * limit of 2 when admitted; once both are added, a's oldest closes, then none. */
	nvt_conns_init(&t, 8, 2, 100);
	CHECK(nvt_conns_add(&t, 10, AF_INET, a, 0) == 0 && nvt_conns_add(&t, 11, AF_INET, a, 1) == 0);
	CHECK(nvt_conns_over(&t, AF_INET, a) == -1);
	CHECK(nvt_conns_admit(&t, AF_INET, a) == 10 && nvt_conns_admit(&t, AF_INET, a) == -1);
	CHECK(nvt_conns_add(&t, 12, AF_INET, a, 2) == 0 && nvt_conns_add(&t, 13, AF_INET, a, 3) == 0);
	CHECK(nvt_conns_over(&t, AF_INET, a) == 11 && nvt_conns_over(&t, AF_INET, a) == -1);
	CHECK(nvt_conns_live(&t) == 2);
	/* So for the table's own limit (3), where 5's answer began after 6's head; 127.0.0.1 has
	 * no per-address limit. */
	nvt_conns_init(&t, 3, 1, 100);
	CHECK(nvt_conns_add(&t, 5, AF_INET, lo, 0) == 0 && nvt_conns_add(&t, 6, AF_INET, lo, 1) == 0);
	nvt_conns_answering(&t, 5, 1, 2);
	CHECK(nvt_conns_add(&t, 7, AF_INET, lo, 2) == 0 && nvt_conns_add(&t, 8, AF_INET, b, 3) == 0);
	CHECK(nvt_conns_over(&t, AF_INET, lo) == 6 && nvt_conns_over(&t, AF_INET, lo) == -1);
	CHECK(nvt_conns_live(&t) == 3);
	/* Texts: an answer that sends one numbered below the oldest kept is closed, once; an
	 * answer done sends none. */
	nvt_conns_init(&t, 8, 8, 100);
	CHECK(nvt_conns_add(&t, 5, AF_INET, a, 0) == 0 && nvt_conns_add(&t, 6, AF_INET, a, 1) == 0 &&
	      nvt_conns_add(&t, 7, AF_INET, a, 2) == 0);
	nvt_conns_answering(&t, 5, 1, 3);
	nvt_conns_sends(&t, 5, 1);
	nvt_conns_answering(&t, 6, 1, 4);
	nvt_conns_sends(&t, 6, 2);
	nvt_conns_answering(&t, 7, 1, 5);
	nvt_conns_sends(&t, 7, 3);
	nvt_conns_answering(&t, 6, 0, 6);
	CHECK(nvt_conns_stale(&t, 1) == -1);
	CHECK(nvt_conns_stale(&t, 3) == 5 && nvt_conns_stale(&t, 3) == -1);
	CHECK(nvt_conns_stale(&t, 4) == 7 && nvt_conns_live(&t) == 1);
	/* The descriptor limit: the table leaves kept descriptors and one to accept with. */
	CHECK(nvt_conns_room(1024, 256, 32) == 256 && nvt_conns_room(288, 256, 32) == 256);
	CHECK(nvt_conns_room(200, 256, 32) == 168 && nvt_conns_room(64, 256, 32) == 32);
	CHECK(nvt_conns_room(20, 256, 32) == NVT_CONNS_MIN && nvt_conns_room(UINT64_MAX, 256, 32) == 256);
}

/* The per-address limit counts a host, not one address of it: an IPv6 peer by its /64 (a host is
 * given one, and may take any address of it), an IPv4-mapped one (::ffff:a.b.c.d) and an IPv4
 * one by the IPv4 address; a link-local IPv6 peer (fe80::/10, whose /64 every host of the link
 * shares) by its whole address. */
static void test_conns_by_host(void)
{
	static struct nvt_conns t;
	const uint8_t h1[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, [15] = 1},
		      h2[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0xab, 0xcd, [15] = 2},
		      h3[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, [14] = 7, [15] = 3},
		      other[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2, [15] = 1};
	const uint8_t m1[16] = {[10] = 0xff, [11] = 0xff, 192, 0, 2, 1},
		      m2[16] = {[10] = 0xff, [11] = 0xff, 192, 0, 2, 2}, v4[16] = {192, 0, 2, 1};
	const uint8_t ll1[16] = {0xfe, 0x80, [15] = 1}, ll2[16] = {0xfe, 0x80, [15] = 2};

	nvt_conns_init(&t, 64, 2, 100);
	CHECK(nvt_conns_add(&t, 10, AF_INET6, h1, 0) == 0 && nvt_conns_add(&t, 11, AF_INET6, h2, 1) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET6, other) == -1);
	CHECK(nvt_conns_admit(&t, AF_INET6, h3) == 10 && nvt_conns_add(&t, 12, AF_INET6, h3, 2) == 0);
	CHECK(nvt_conns_over(&t, AF_INET6, h1) == -1 && nvt_conns_live(&t) == 2);
	/* IPv4-mapped: each IPv4 address apart (their /64 is one), the same as its IPv4 form. */
	CHECK(nvt_conns_add(&t, 20, AF_INET6, m1, 3) == 0 && nvt_conns_add(&t, 21, AF_INET6, m2, 4) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET6, m2) == -1 && nvt_conns_add(&t, 22, AF_INET6, m2, 5) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET, v4) == -1 && nvt_conns_add(&t, 23, AF_INET, v4, 6) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET6, m1) == 20);
	/* Link-local: each address apart. */
	CHECK(nvt_conns_add(&t, 30, AF_INET6, ll1, 7) == 0 && nvt_conns_add(&t, 31, AF_INET6, ll1, 8) == 0);
	CHECK(nvt_conns_admit(&t, AF_INET6, ll2) == -1 && nvt_conns_admit(&t, AF_INET6, ll1) == 30);
}

int main(void)
{
	test_outbuf();
	test_utf8();
	test_shown();
	test_promtext();
	test_listen();
	test_conns();
	test_conns_by_host();
	return CHECK_DONE();
}
