/* Unit tests: TPC set parsing and formatting. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/tpcset.h"
#include "core/text.h"

#include <stdlib.h>

static struct nvt_tpcset set_of(const char *list)
{
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	if (*list && nvt_parse_list(list, NVT_MAX_TPCS, &s) != NVT_PARSE_OK)
		abort();
	return s;
}

static const char *as_list(const struct nvt_tpcset *s)
{
	static char buf[NVT_LIST_TEXT_MAX];
	if (nvt_format_list(s, buf, sizeof(buf)) < 0)
		return "<format error>";
	return buf;
}

static const char *as_mask(const struct nvt_tpcset *s)
{
	static char buf[NVT_MASK_TEXT_MAX];
	if (nvt_format_mask(s, buf, sizeof(buf)) < 0)
		return "<format error>";
	return buf;
}

static int mask_rc(const char *text, unsigned limit)
{
	struct nvt_tpcset s;
	return nvt_parse_mask(text, limit, &s);
}

static int list_rc(const char *text, unsigned limit)
{
	struct nvt_tpcset s;
	return nvt_parse_list(text, limit, &s);
}

static void test_masks(void)
{
	struct nvt_tpcset s;
	char digits[80];

	CHECK(nvt_parse_mask("f", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0-3");
	CHECK(nvt_parse_mask("0xF0", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "4-7");
	CHECK(nvt_parse_mask("0X1", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0");
	CHECK(nvt_parse_mask("ff,ffffffff", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0-39");
	CHECK(nvt_parse_mask("3,00000000,00000000", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "64-65");
	CHECK(nvt_parse_mask("0", 66, &s) == NVT_PARSE_OK && nvt_set_count(&s) == 0);

	CHECK(mask_rc("", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("0x", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("g", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc(" f", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("f ", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc(",f", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("f,", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("f,,f", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("-1", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("0x0x1", 66) == NVT_PARSE_SYNTAX);
	CHECK(mask_rc("ff", 8) == NVT_PARSE_OK);
	CHECK(mask_rc("100", 8) == NVT_PARSE_RANGE);
	CHECK(mask_rc("4,00000000,00000000", 66) == NVT_PARSE_RANGE);
	CHECK(mask_rc("1", NVT_MAX_TPCS + 1) == NVT_PARSE_SYNTAX);

	/* 64 digits fill all 256 bits; a 65th significant digit is out of range;
	 * leading zeros are harmless. */
	memset(digits, 'f', 64);
	digits[64] = '\0';
	CHECK(nvt_parse_mask(digits, NVT_MAX_TPCS, &s) == NVT_PARSE_OK && nvt_set_count(&s) == 256);
	CHECK_STR(as_mask(&s), digits);
	memset(digits, '0', 70);
	digits[0] = '1';
	digits[70] = '\0';
	CHECK(mask_rc(digits, NVT_MAX_TPCS) == NVT_PARSE_RANGE);
	digits[0] = '0';
	digits[69] = '1';
	CHECK(nvt_parse_mask(digits, NVT_MAX_TPCS, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0");
}

/* Where MASK may be left out, only a word written as no command is named is the MASK. */
static void test_mask_spelled_out(void)
{
	const char *masks[] = {"0xcc", "0XFF", "0x", "0xzz", "0x0x1", "3", "0", "12", "3,00000000"};
	const char *commands[] = {"cc", "bc", "dc", "dd", "ed", "add", "face", "0ad", "ff", "f", "ff,ff",
				  "python3", "./0", "", ",", ",,", "1-3", "-1", "1 ", NULL};

	for (size_t i = 0; i < sizeof(masks) / sizeof(*masks); i++)
		CHECK(nvt_mask_spelled_out(masks[i]) == 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		CHECK(nvt_mask_spelled_out(commands[i]) == 0);
}

static void test_lists(void)
{
	struct nvt_tpcset s;

	CHECK(nvt_parse_list("0-15,32,40-47:2", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0-15,32,40,42,44,46");
	CHECK(nvt_set_count(&s) == 21);
	CHECK(nvt_parse_list("5", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "5");
	CHECK(nvt_parse_list("3-3", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "3");
	CHECK(nvt_parse_list("9,1,1,0-2", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0-2,9");
	CHECK(nvt_parse_list("0-65:65", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0,65");
	CHECK(nvt_parse_list("65", 66, &s) == NVT_PARSE_OK);
	CHECK(nvt_parse_list("all", 66, &s) == NVT_PARSE_OK);
	CHECK_STR(as_list(&s), "0-65");
	CHECK(nvt_parse_list("all", 12, &s) == NVT_PARSE_OK && nvt_set_count(&s) == 12);
	CHECK(list_rc("all", 0) == NVT_PARSE_RANGE);
	CHECK(list_rc("all,1", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("ALL", 66) == NVT_PARSE_SYNTAX);

	CHECK(list_rc("", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("3-1", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1-", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("-1", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1,,2", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1,", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc(",1", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("a", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("0x1", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1 ", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1-5:0", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1-5:", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("1:2", 66) == NVT_PARSE_SYNTAX);
	CHECK(list_rc("66", 66) == NVT_PARSE_RANGE);
	CHECK(list_rc("0-300", 66) == NVT_PARSE_RANGE);
	CHECK(list_rc("99999999999999999999999", 66) == NVT_PARSE_RANGE);
	CHECK(list_rc("0-99999999999999999999", 66) == NVT_PARSE_RANGE);
	/* A syntax error wins over a range error, wherever it is. */
	CHECK(list_rc("300,x", 66) == NVT_PARSE_SYNTAX);
}

static void test_formats(void)
{
	struct nvt_tpcset s = set_of("");
	char small[4];

	CHECK_STR(as_mask(&s), "0");
	CHECK_STR(as_list(&s), "");
	s = set_of("0-3,5,7-9");
	CHECK_STR(as_list(&s), "0-3,5,7-9");
	CHECK_STR(as_mask(&s), "3af");
	s = set_of("0,255");
	CHECK(strlen(as_mask(&s)) == 64);
	CHECK(as_mask(&s)[0] == '8' && as_mask(&s)[63] == '1');
	CHECK(nvt_format_list(&s, small, sizeof(small)) == -1);
	CHECK(nvt_format_mask(&s, small, sizeof(small)) == -1);
	s = set_of("0-7");
	CHECK(nvt_format_mask(&s, small, 3) == 2);
	CHECK_STR(small, "ff");
}

static void test_set_ops(void)
{
	struct nvt_tpcset a = set_of("0-9,100"), b = set_of("5-14"), out;

	CHECK(nvt_set_count(&a) == 11);
	CHECK(nvt_set_highest(&a) == 100);
	nvt_set_clear(&out);
	CHECK(nvt_set_highest(&out) == -1);
	nvt_set_and(&out, &a, &b);
	CHECK_STR(as_list(&out), "5-9");
	nvt_set_or(&out, &a, &b);
	CHECK_STR(as_list(&out), "0-14,100");
	nvt_set_andnot(&out, &a, &b);
	CHECK_STR(as_list(&out), "0-4,100");
	nvt_set_fill(&out, 66);
	CHECK_STR(as_list(&out), "0-65");
	CHECK(nvt_set_has(&out, 65) && !nvt_set_has(&out, 66) && !nvt_set_has(&out, 1000));
	CHECK(nvt_set_equal(&a, &a) && !nvt_set_equal(&a, &b));
}

/* Random sets survive format -> parse in both notations. */
static void test_round_trip(void)
{
	srand(12345);
	for (int i = 0; i < 2000; i++) {
		struct nvt_tpcset s, back;
		char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
		nvt_set_clear(&s);
		int density = rand() % 100;
		for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
			if (rand() % 100 < density)
				nvt_set_add(&s, t);
		CHECK(nvt_format_mask(&s, mask, sizeof(mask)) > 0);
		CHECK(nvt_parse_mask(mask, NVT_MAX_TPCS, &back) == NVT_PARSE_OK);
		CHECK(nvt_set_equal(&s, &back));
		if (nvt_set_count(&s)) {
			CHECK(nvt_format_list(&s, list, sizeof(list)) > 0);
			CHECK(nvt_parse_list(list, NVT_MAX_TPCS, &back) == NVT_PARSE_OK);
			CHECK(nvt_set_equal(&s, &back));
		}
	}
}

/* A list tidied of a person's slips, where that parses. */
static void test_list_tidied(void)
{
	char out[64];
	static const char *const slips[][2] = {
		{"1-3,,6", "1-3,6"}, {"1-3, 6", "1-3,6"}, {"1..3", "1-3"}, {"1-3,", "1-3"},
		{",1", "1"},         {"1 - 3", "1-3"},    {"0..7, 9,,", "0-7,9"},
	};
	static const char *const none[] = {"1-3,6", "x", "1-", "all,3", ",", " ", "1...3", "", "0x3"};

	for (size_t i = 0; i < sizeof(slips) / sizeof(*slips); i++) {
		CHECK(nvt_list_tidied(slips[i][0], 64, out, sizeof(out)) == 0);
		CHECK_STR(out, slips[i][1]);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
		CHECK(nvt_list_tidied(none[i], 64, out, sizeof(out)) == -1);
	CHECK(nvt_list_tidied("1-3,,6", 64, out, 4) == -1); /* too small */
	CHECK(nvt_list_tidied(NULL, 64, out, sizeof(out)) == -1);
}

/* What the parsers say is wrong, for the command's messages. */
static void test_parse_errors(void)
{
	struct nvt_parse_error e;
	struct nvt_tpcset s;

	CHECK(nvt_parse_list_why("", 64, &s, &e) == NVT_PARSE_SYNTAX && e.problem == NVT_PARSE_EMPTY);
	CHECK(nvt_parse_mask_why("", 64, &s, &e) == NVT_PARSE_SYNTAX && e.problem == NVT_PARSE_EMPTY);
	CHECK(nvt_parse_list_why("0-3,9-5", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.problem == NVT_PARSE_DOWN && e.first == 9 && e.last == 5);
	CHECK(nvt_parse_list_why("1,40-47:0,3", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.problem == NVT_PARSE_ZERO_STEP && e.word == 2 && e.word_len == 7);
	CHECK(nvt_parse_list_why("1,x", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.problem == NVT_PARSE_MALFORMED && e.word == 2 && e.word_len == 1 && e.at == 2);
	/* A malformed list: the item at fault and where in it. */
	CHECK(nvt_parse_list_why("1-3,,6", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.problem == NVT_PARSE_MALFORMED && e.word == 4 && e.word_len == 0 && e.at == 4);
	CHECK(nvt_parse_list_why("1-3, 6", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.word == 4 && e.word_len == 2 && e.at == 4);
	CHECK(nvt_parse_list_why("1..3", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.word == 0 && e.word_len == 4 && e.at == 1);
	CHECK(nvt_parse_list_why("1-3,", 64, &s, &e) == NVT_PARSE_SYNTAX && e.at == 3);
	CHECK(nvt_parse_list_why("1-", 64, &s, &e) == NVT_PARSE_SYNTAX && e.at == 2 && e.word_len == 2);
	/* Too high: the largest number named, not the first beyond the limit. */
	CHECK(nvt_parse_list_why("70,3,200-210:5", 64, &s, &e) == NVT_PARSE_RANGE);
	CHECK(e.problem == NVT_PARSE_TOO_HIGH && e.highest == 210);
	CHECK(nvt_parse_list_why("1234567", 64, &s, &e) == NVT_PARSE_RANGE && e.highest == 99999);
	CHECK(nvt_parse_list_why("all", 0, &s, &e) == NVT_PARSE_RANGE && e.highest == -1);
	/* The largest number as written, however long: leading zeros off, steps not counted. */
	CHECK(nvt_parse_list_why("0-4294967295", 64, &s, &e) == NVT_PARSE_RANGE && e.top == 2 &&
	      e.top_len == 10);
	CHECK(nvt_parse_list_why("1,0070,2-9:100", 64, &s, &e) == NVT_PARSE_RANGE && e.top == 4 &&
	      e.top_len == 2);
	CHECK(nvt_parse_list_why("all", 0, &s, &e) == NVT_PARSE_RANGE && e.top_len == 0);
	/* A mask's highest bit: 0x1ff names TPC 8; commas and leading zeros do not count. */
	CHECK(nvt_parse_mask_why("0x001ff", 8, &s, &e) == NVT_PARSE_RANGE && e.highest == 8);
	CHECK(nvt_parse_mask_why("1,00000000", 8, &s, &e) == NVT_PARSE_RANGE && e.highest == 32);
	CHECK(nvt_parse_mask_why("fg", 64, &s, &e) == NVT_PARSE_SYNTAX);
	CHECK(e.problem == NVT_PARSE_MALFORMED);
	CHECK(nvt_parse_mask_why("ff", 64, &s, &e) == NVT_PARSE_OK && e.problem == NVT_PARSE_NOTHING);
}

/* The one decimal reader (core/text.c), bounded or not, and the hex digit's value. */
static void test_text_numbers(void)
{
	const char *text = "12345x", *end;
	uint64_t v = 0;

	CHECK((end = nvt_decimal(text, 99999, &v)) == text + 5 && v == 12345);
	CHECK(nvt_decimal(text, 12344, &v) == NULL);
	CHECK(nvt_decimal("x1", 9, &v) == NULL);
	CHECK(nvt_decimal("", 9, &v) == NULL);
	CHECK(nvt_decimal("18446744073709551615", UINT64_MAX, &v) && v == UINT64_MAX);
	CHECK(nvt_decimal("18446744073709551616", UINT64_MAX, &v) == NULL);
	/* A digit above a small max: refused, not wrapped around. */
	CHECK(nvt_decimal("7", 5, &v) == NULL);
	CHECK(nvt_decimal("5", 5, &v) && v == 5);
	CHECK(nvt_decimal("0", 0, &v) && v == 0);
	/* Bounded: stops at end, before a digit beyond it. */
	CHECK((end = nvt_decimal_in(text, text + 3, 99999, &v)) == text + 3 && v == 123);
	CHECK(nvt_decimal_in(text, text, 99999, &v) == NULL);
	CHECK(nvt_hex_digit('0') == 0 && nvt_hex_digit('9') == 9);
	CHECK(nvt_hex_digit('a') == 10 && nvt_hex_digit('F') == 15);
	CHECK(nvt_hex_digit('g') == -1 && nvt_hex_digit('x') == -1 && nvt_hex_digit('\0') == -1);
}

/* The word a slip was meant as (did you mean). */
static void test_nearest_word(void)
{
	static const char *const options[] = {"exclude-running", "exclude", "strategy", "tpcs",
					      "top", "tpc-list", NULL, "json"};
	static const char *const words[] = {"packed", "spread", "clusters", "gate", "gpu"};

#define NEAR(w, list) nvt_nearest_word(w, strlen(w), list, sizeof(list) / sizeof(list[0]))
	CHECK(NEAR("exclude-runing", options) == 0);  /* a letter left out */
	CHECK(NEAR("exclude-rnuning", options) == 0); /* two swapped, one left out */
	CHECK(NEAR("stratgey", options) == 2);
	CHECK(NEAR("jsno", options) == 7);
	CHECK(NEAR("tpo", options) == 4);
	CHECK(NEAR("sprad", words) == 1);
	CHECK(NEAR("clustres", words) == 2);
	/* Too far, a tie, or no slip at all: no answer. */
	CHECK(NEAR("xyzzy", options) == -1);
	CHECK(NEAR("tpc", options) == 3);
	CHECK(nvt_nearest_word("tpx", 3, (const char *const[]){"tpc", "tpa"}, 2) == -1); /* a tie */
	CHECK(NEAR("json", options) == -1);
	CHECK(NEAR("gat", words) == 3);
	CHECK(nvt_nearest_word("packedXX", 6, words, 5) == -1); /* only len bytes: "packed" itself */
	CHECK(nvt_nearest_word("x", 1, words, 0) == -1);
#undef NEAR
}

int main(void)
{
	test_nearest_word();
	test_text_numbers();
	test_parse_errors();
	test_masks();
	test_mask_spelled_out();
	test_list_tidied();
	test_lists();
	test_formats();
	test_set_ops();
	test_round_trip();
	return CHECK_DONE();
}
