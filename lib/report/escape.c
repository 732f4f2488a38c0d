/* Lock strings escaped for each output format: a lock is untrusted input. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "util/text.h"

void el_out_put(el_out *o, const char *s, size_t n)
{
	if (!o->overflow && el_buf_put(&o->b, s, n) != 0)
		o->overflow = true;
}

void el_out_puts(el_out *o, const char *s)
{
	el_out_put(o, s, strlen(s));
}

void el_out_printf(el_out *o, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->overflow = true;
	} else if ((size_t)n < sizeof(small)) {
		el_out_put(o, small, (size_t)n);
	} else if (!o->overflow) {
		va_start(ap, fmt);
		if (el_buf_reserve(&o->b, (size_t)n + 1) != 0) {
			o->overflow = true;
		} else {
			vsnprintf(o->b.data + o->b.len, (size_t)n + 1, fmt, ap);
			o->b.len += (size_t)n;
		}
		va_end(ap);
	}
}

/* Writes cp (whose UTF-8 is [start, next)) itself in the format, or returns false to copy it as it is. */
typedef bool (*special_fn)(el_out *o, long cp, const char *next, const char *end);

/*
 * Walk s: printable code points go to special() or are copied; an
 * invalid byte or a control is written visibly as \xNN per byte (the way
 * `envlock diff` shows them) or \uNNNN for a bidi control, with
 * backslash being the format's way to write a backslash.
 */
static void put_filtered(el_out *o, const char *s, special_fn special, const char *backslash)
{
	const char *end = s + strlen(s);

	while (s < end) {
		const char *start = s;
		long cp = el_utf8_next(&s, end);

		if (cp >= 0x100 && el_is_control_cp(cp)) {
			el_out_puts(o, backslash);
			el_out_printf(o, "u%04lx", cp);
		} else if (cp < 0 || el_is_control_cp(cp)) {
			for (const char *b = start; b < s; b++) {
				el_out_puts(o, backslash);
				el_out_printf(o, "x%02x", (unsigned char)*b);
			}
		} else if (!special || !special(o, cp, s, end)) {
			el_out_put(o, start, (size_t)(s - start));
		}
	}
}

void el_esc_text(el_out *o, const char *s)
{
	if (!o->overflow && el_term_text(&o->b, s) != 0)
		o->overflow = true;
}

/*
 * CommonMark lets any ASCII punctuation be backslash-escaped; these are
 * the ones that can start emphasis, code, links, raw HTML, entities, math
 * (GitHub) or strike-through, and '|', which would end a table cell (GFM
 * tables take "\|" as a pipe even inside other spans).
 */
static bool md_special(el_out *o, long cp, const char *next, const char *end)
{
	(void)next;
	(void)end;
	if (cp > 0 && cp < 0x80 && strchr("\\`*_[]<>|~$&", (int)cp)) {
		el_out_put(o, "\\", 1);
		el_out_put(o, (const char[]){ (char)cp }, 1);
		return true;
	}
	return false;
}

void el_esc_md(el_out *o, const char *s)
{
	put_filtered(o, s, md_special, "\\\\");
}

static bool html_special(el_out *o, long cp, const char *next, const char *end)
{
	const char *ent = NULL;

	(void)next;
	(void)end;
	switch (cp) {
	case '&': ent = "&amp;"; break;
	case '<': ent = "&lt;"; break;
	case '>': ent = "&gt;"; break;
	case '"': ent = "&quot;"; break;
	case '\'': ent = "&#39;"; break;
	default: return false;
	}
	el_out_puts(o, ent);
	return true;
}

void el_esc_html(el_out *o, const char *s)
{
	put_filtered(o, s, html_special, "\\");
}

/*
 * LaTeX, ASCII only so that the table compiles whatever the document's
 * input encoding: the ten specials of the LaTeX book (\ { } $ & # ^ _ % ~)
 * and the characters OT1 fonts print as something else (< > | ") as
 * commands, ligatures broken ("--" would print an en dash), a few
 * symbols envlock itself writes as LaTeX, and any other non-ASCII
 * character as <U+XXXX>. A break is allowed after each '/' (long paths).
 */
static bool latex_special(el_out *o, long cp, const char *next, const char *end)
{
	char after = next < end ? *next : '\0';
	const char *rep = NULL;

	switch (cp) {
	case '\\': rep = "\\textbackslash{}"; break;
	case '{': rep = "\\{"; break;
	case '}': rep = "\\}"; break;
	case '$': rep = "\\$"; break;
	case '&': rep = "\\&"; break;
	case '#': rep = "\\#"; break;
	case '%': rep = "\\%"; break;
	case '_': rep = "\\_"; break;
	case '^': rep = "\\textasciicircum{}"; break;
	case '~': rep = "\\textasciitilde{}"; break;
	case '<': rep = "\\textless{}"; break;
	case '>': rep = "\\textgreater{}"; break;
	case '|': rep = "\\textbar{}"; break;
	case '"': rep = "\\texttt{\\char34}"; break;
	case '/': rep = "/\\allowbreak{}"; break;
	case 0xD7: rep = "$\\times$"; break;
	case 0x2026: rep = "\\ldots{}"; break;
	case 0x2013: rep = "--"; break;
	case 0x2014: rep = "---"; break;
	case 0x2192: rep = "$\\rightarrow$"; break;
	case 0x2264: rep = "$\\leq$"; break;
	case 0x2265: rep = "$\\geq$"; break;
	case '-': case '\'': case '`': case '!': case '?':
		/* --, '', ``, !` and ?` are ligatures in TeX's fonts */
		el_out_put(o, (const char[]){ (char)cp }, 1);
		if ((cp == '-' && after == '-') || (cp == '\'' && after == '\'') || after == '`')
			el_out_puts(o, "{}");
		return true;
	default:
		if (cp < 0x80)
			return false;
		el_out_printf(o, "\\textless{}U+%04lX\\textgreater{}", cp);
		return true;
	}
	el_out_puts(o, rep);
	return true;
}

void el_esc_latex(el_out *o, const char *s)
{
	put_filtered(o, s, latex_special, "\\textbackslash{}");
}
