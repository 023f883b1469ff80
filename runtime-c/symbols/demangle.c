/* C++ names as bpftrace prints them in user stacks and usym() (bcc and
 * blazesym demangle with the C++ library's demangler): an Itanium ABI
 * demangler of our own, the tracer being static and linking no libstdc++.
 * It covers what user stacks hold: nested names, namespaces (the
 * anonymous one too), templates and their literal arguments, std::
 * abbreviations, substitutions, template parameters, constructors,
 * destructors, operators, conversion operators, lambdas and unnamed
 * types, local names, cv- and ref-qualified methods, function
 * parameters (pointers and references to functions and arrays among
 * them), ABI tags, clone suffixes (.isra.0, .cold) and the special names
 * (vtable for, typeinfo for, thunks, guard variables). What it does not
 * know (expressions in template arguments, decltype, pointers to members,
 * vendor qualifiers, packs) makes it give up: the caller prints the
 * mangled name, as the symbol table has it, never a wrong one.
 *
 * The text is the C++ library's (`char const*`, `> >`,
 * `[clone .isra.0]`): tests/test_runtime_c.py holds it to c++filt's over
 * every symbol of libstdc++ this demangler takes.
 *
 * Parsing builds nodes in a fixed arena (no allocation); the substitution
 * table and the template arguments point at nodes; printing walks them. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plyc_rt.h"

#define MAX_NODES 1024
#define MAX_KIDS 1024
#define MAX_SUBS 256
/* Steps the printer's walks take (print(), items(), find_pack()): a name
 * whose template arguments name themselves (T_ inside f's own <...>) is a
 * graph of a few nodes with exponentially many paths through it. The
 * longest names of libstdc++ and LLVM take under 2,000
 * (tests/test_demangle.py). */
#define MAX_WORK (1L << 16)

enum kind {
	K_TEXT,    /* text, len */
	K_QUAL,    /* a::b: a, b */
	K_TMPL,    /* a<kids> */
	K_PTR,     /* a*  */
	K_LREF,    /* a&  */
	K_RREF,    /* a&& */
	K_CV,      /* a const / volatile / restrict: n (bits) */
	K_FUNC,    /* a function type: a return, kids parameters, n cv/ref bits */
	K_ARRAY,   /* a [text] */
	K_LIT,     /* a literal template argument: a its type, text its digits, n negative */
	K_ABI,     /* a[abi:text] */
	K_SPECIAL, /* text then a ("vtable for ") */
	K_PACK,    /* kids, comma-separated (a template argument pack) */
	K_ENC,     /* a function: a name, b return type (or -1), kids parameters, n cv/ref bits */
	K_LAMBDA,  /* {lambda(kids)#n} */
	K_UNNAMED, /* {unnamed type#n} */
	K_CLONE,   /* a then " [clone text]" */
	K_CONV,    /* operator a (a conversion operator) */
	K_DTOR,    /* ~a */
	K_PACKEXP, /* a once for each element of the pack inside it (Dp) */
	K_PTRMEM,  /* a pointer to a member of class a, of type b */
	K_TPARAM,  /* template parameter n: resolved when printed, against the
	            * template args of the function being printed, as the C++
	            * library's demangler resolves it (a substitution of T_
	            * taken inside a local name means the outer function's) */
};

enum { CV_CONST = 1, CV_VOLATILE = 2, CV_RESTRICT = 4, REF_L = 8, REF_R = 16 };
/* a K_TEXT's n: an operator's name (printed after "operator"), a constructor's */
enum { TEXT_OPERATOR = 1, TEXT_CTOR = 2 };

struct node {
	enum kind kind;
	int a, b;
	int kid0, nkids;
	const char *text;
	int len;
	int n;
	int t;      /* a K_ENC's template arguments (a K_TMPL), or -1 */
};

struct dm {
	const char *p, *end;
	int failed;
	struct node nodes[MAX_NODES];
	int nn;
	int kids[MAX_KIDS];
	int nk;
	int subs[MAX_SUBS];
	int ns;
	/* the template arguments of the function being printed (K_TMPL), or -1 */
	int print_targs;
	int targs;
	/* the last template-args a name parsed (name() and nested_name() set it) */
	int name_targs;
	/* the unqualified source name last parsed: what a constructor or a
	 * destructor is named after */
	int last_name;
	char *out;
	size_t cap, pos;
	int depth;
	long work;
	/* while a pack expansion prints: the element of its pack printed */
	int pack, pack_index;
	/* what the printer takes for the last character printed when a ", "
	 * was taken back (an empty pack after it): the C++ library's
	 * demangler keeps the space it appended, so `A<B<int>, <empty>>`
	 * prints `A<B<int>>` */
	char last_taken_back;
};

static int fail(struct dm *d)
{
	d->failed = 1;
	return -1;
}

/* One step of a walk over the nodes; nonzero (given up) past MAX_WORK. */
static int spend(struct dm *d)
{
	if (++d->work > MAX_WORK)
		d->failed = 1;
	return d->failed;
}

static int new_node(struct dm *d, enum kind k, int a, int b)
{
	struct node *n;

	if (d->nn >= MAX_NODES) {
		d->failed = 1;
		return -1;
	}
	n = &d->nodes[d->nn];
	memset(n, 0, sizeof(*n));
	n->kind = k;
	n->a = a;
	n->b = b;
	return d->nn++;
}

static int text_node(struct dm *d, const char *text, int len)
{
	int i = new_node(d, K_TEXT, -1, -1);

	if (i >= 0) {
		d->nodes[i].text = text;
		d->nodes[i].len = len < 0 ? (int)strlen(text) : len;
	}
	return i;
}

/* A node of kind k over a list (its kids: kept together in d->kids, after
 * whatever the items' own parsing put there). */
static int list_node(struct dm *d, enum kind k, int a, const int *items, int n)
{
	int i, x;

	if (d->nk + n > MAX_KIDS)
		return fail(d);
	x = new_node(d, k, a, -1);
	if (x < 0)
		return -1;
	d->nodes[x].kid0 = d->nk;
	d->nodes[x].nkids = n;
	for (i = 0; i < n; i++)
		d->kids[d->nk++] = items[i];
	return x;
}

static int is_void(const struct dm *d, int n)
{
	return n >= 0 && d->nodes[n].kind == K_TEXT && d->nodes[n].len == 4 && !memcmp(d->nodes[n].text, "void", 4);
}

static void add_sub(struct dm *d, int node)
{
	if (node < 0)
		return;
	if (d->ns >= MAX_SUBS) {
		d->failed = 1;
		return;
	}
	d->subs[d->ns++] = node;
}

static int peek(const struct dm *d, int off)
{
	return d->p + off < d->end ? (unsigned char)d->p[off] : 0;
}

static int eat(struct dm *d, char c)
{
	if (peek(d, 0) == c) {
		d->p++;
		return 1;
	}
	return 0;
}

/* a decimal <number>; -1 when there is none */
static long number(struct dm *d)
{
	long v = 0;
	int any = 0;

	while (peek(d, 0) >= '0' && peek(d, 0) <= '9') {
		v = v * 10 + (peek(d, 0) - '0');
		if (v > 100000000L)
			return -1;
		d->p++;
		any = 1;
	}
	return any ? v : -1;
}

/* <seq-id> _ of S_/T_: S_ is 0, S0_ 1, S1_ 2 ... (base 36) */
static long seq_id(struct dm *d)
{
	long v = 0;

	if (eat(d, '_'))
		return 0;
	while (peek(d, 0) && peek(d, 0) != '_') {
		int c = peek(d, 0);

		if (c >= '0' && c <= '9')
			v = v * 36 + (c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + (c - 'A' + 10);
		else
			return -1;
		if (v > 100000)
			return -1;
		d->p++;
	}
	if (!eat(d, '_'))
		return -1;
	return v + 1;
}

static int type(struct dm *d);
static int name(struct dm *d, int *has_targs, int *cv);
static int encoding(struct dm *d, int top);

/* <source-name> ::= <length> <identifier> */
static int source_name(struct dm *d)
{
	long len = number(d);
	int i;

	if (len <= 0 || d->p + len > d->end)
		return fail(d);
	if (len >= 10 && !strncmp(d->p, "_GLOBAL_", 8) && (d->p[8] == '.' || d->p[8] == '_' || d->p[8] == '$') &&
	    d->p[9] == 'N')
		i = text_node(d, "(anonymous namespace)", -1);
	else
		i = text_node(d, d->p, (int)len);
	d->p += len;
	d->last_name = i;
	return i;
}

struct op { const char code[3]; const char *name; };
static const struct op ops[] = {
	{ "nw", "new" }, { "na", "new[]" }, { "dl", "delete" }, { "da", "delete[]" }, { "ps", "+" },
	{ "ng", "-" }, { "ad", "&" }, { "de", "*" }, { "co", "~" }, { "pl", "+" }, { "mi", "-" },
	{ "ml", "*" }, { "dv", "/" }, { "rm", "%" }, { "an", "&" }, { "or", "|" }, { "eo", "^" },
	{ "aS", "=" }, { "pL", "+=" }, { "mI", "-=" }, { "mL", "*=" }, { "dV", "/=" }, { "rM", "%=" },
	{ "aN", "&=" }, { "oR", "|=" }, { "eO", "^=" }, { "ls", "<<" }, { "rs", ">>" }, { "lS", "<<=" },
	{ "rS", ">>=" }, { "eq", "==" }, { "ne", "!=" }, { "lt", "<" }, { "gt", ">" }, { "le", "<=" },
	{ "ge", ">=" }, { "ss", "<=>" }, { "nt", "!" }, { "aa", "&&" }, { "oo", "||" }, { "pp", "++" },
	{ "mm", "--" }, { "cm", "," }, { "pm", "->*" }, { "pt", "->" }, { "cl", "()" }, { "ix", "[]" },
	{ "qu", "?" }, { "aw", "co_await" },
};

/* <operator-name>: "operator+" (a space before a word: "operator new") */
static int operator_name(struct dm *d)
{
	size_t i;

	if (peek(d, 0) == 'c' && peek(d, 1) == 'v') {
		int t;

		d->p += 2;
		t = type(d);
		return t < 0 ? -1 : new_node(d, K_CONV, t, -1);
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (peek(d, 0) == ops[i].code[0] && peek(d, 1) == ops[i].code[1]) {
			int n;

			d->p += 2;
			n = text_node(d, ops[i].name, -1);
			if (n >= 0)
				d->nodes[n].n = TEXT_OPERATOR;
			return n;
		}
	return fail(d);
}

/* Ul <params> E [<number>] _ , Ut [<number>] _ */
static int unnamed_type(struct dm *d)
{
	long num;
	int i;

	if (peek(d, 1) == 'l') {
		int params[64], n = 0;

		d->p += 2;
		while (!eat(d, 'E')) {
			int t = type(d);

			if (t < 0 || n >= 64)
				return fail(d);
			params[n++] = t;
		}
		num = number(d);
		if (!eat(d, '_'))
			return fail(d);
		/* a lambda of no parameters is mangled with one: void */
		if (n == 1 && is_void(d, params[0]))
			n = 0;
		i = list_node(d, K_LAMBDA, -1, params, n);
	} else if (peek(d, 1) == 't') {
		d->p += 2;
		num = number(d);
		if (!eat(d, '_'))
			return fail(d);
		i = new_node(d, K_UNNAMED, -1, -1);
	} else {
		return fail(d);
	}
	if (i >= 0)
		d->nodes[i].n = (int)(num < 0 ? 1 : num + 2);
	return i;
}

/* B <source-name>: name[abi:tag], as often as given */
static int abi_tags(struct dm *d, int n)
{
	while (n >= 0 && peek(d, 0) == 'B') {
		long len;
		int t;

		d->p++;
		len = number(d);
		if (len <= 0 || d->p + len > d->end)
			return fail(d);
		t = new_node(d, K_ABI, n, -1);
		if (t < 0)
			return -1;
		d->nodes[t].text = d->p;
		d->nodes[t].len = (int)len;
		d->p += len;
		n = t;
	}
	return n;
}

/* <unqualified-name>: a source name, an operator, a constructor or
 * destructor (named after the last source name), a lambda */
static int unqualified_name(struct dm *d)
{
	int c = peek(d, 0), n;

	if (c >= '0' && c <= '9') {
		n = source_name(d);
	} else if (c == 'U') {
		n = unnamed_type(d);
	} else if (c == 'C' && peek(d, 1) >= '1' && peek(d, 1) <= '5') {
		/* C1 complete, C2 base, C3 allocating, C4 C5: gcc's unified and comdat */
		if (d->last_name < 0)
			return fail(d);
		d->p += 2;
		n = text_node(d, d->nodes[d->last_name].text, d->nodes[d->last_name].len);
		if (n >= 0)
			d->nodes[n].n = TEXT_CTOR;
	} else if (c == 'D' && peek(d, 1) >= '0' && peek(d, 1) <= '5' && peek(d, 1) != '3') {
		if (d->last_name < 0)
			return fail(d);
		d->p += 2;
		n = new_node(d, K_DTOR, d->last_name, -1);
	} else if (c >= 'a' && c <= 'z') {
		n = operator_name(d);
	} else {
		return fail(d);
	}
	return abi_tags(d, n);
}

/* <template-arg>: a type, a literal, a pack */
static int template_arg(struct dm *d)
{
	if (peek(d, 0) == 'L') {
		int t, i, neg;
		const char *start;

		d->p++;
		if (peek(d, 0) == '_' && peek(d, 1) == 'Z') {
			/* the address of an entity: L _Z <encoding> E */
			d->p += 2;
			i = encoding(d, 0);
			if (i < 0 || !eat(d, 'E'))
				return fail(d);
			return i;
		}
		t = type(d);
		if (t < 0)
			return -1;
		neg = eat(d, 'n');
		start = d->p;
		while (peek(d, 0) >= '0' && peek(d, 0) <= '9')
			d->p++;
		if (d->p == start || !eat(d, 'E'))
			return fail(d);
		i = new_node(d, K_LIT, t, -1);
		if (i >= 0) {
			d->nodes[i].text = start;
			d->nodes[i].len = (int)(d->p - 1 - start);
			d->nodes[i].n = neg;
		}
		return i;
	}
	if (peek(d, 0) == 'J') {
		int args[64], n = 0;

		d->p++;
		while (!eat(d, 'E')) {
			int a = template_arg(d);

			if (a < 0 || n >= 64)
				return fail(d);
			args[n++] = a;
		}
		return list_node(d, K_PACK, -1, args, n);
	}
	if (peek(d, 0) == 'X')
		return fail(d); /* an expression */
	return type(d);
}

/* I <template-arg>+ E, applied to the name n */
static int template_args(struct dm *d, int n)
{
	int args[64], na = 0, name = d->last_name;

	if (!eat(d, 'I'))
		return fail(d);
	while (!eat(d, 'E')) {
		int a = template_arg(d);

		if (a < 0 || na >= 64)
			return fail(d);
		args[na++] = a;
	}
	/* a constructor after the arguments is named after the template, not
	 * after a name inside them */
	d->last_name = name;
	return list_node(d, K_TMPL, n, args, na);
}

static int qual(struct dm *d, int prefix, int n)
{
	return prefix < 0 ? n : new_node(d, K_QUAL, prefix, n);
}

/* The abbreviations of std:: (S[absiod]; St is handled by the callers):
 * short, or whole before a constructor or destructor of a prefix (as the
 * C++ library's demangler prints them), and the name its constructors take. */
static const struct { char code; const char *simple, *full, *ctor; } abbreviations[] = {
	{ 'a', "std::allocator", "std::allocator", "allocator" },
	{ 'b', "std::basic_string", "std::basic_string", "basic_string" },
	{ 's', "std::string", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "basic_string" },
	{ 'i', "std::istream", "std::basic_istream<char, std::char_traits<char> >", "basic_istream" },
	{ 'o', "std::ostream", "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream" },
	{ 'd', "std::iostream", "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream" },
};

/* <substitution>: S_, S<seq>_, or an abbreviation (prefix: in a nested
 * name's prefix) */
static int substitution(struct dm *d, int prefix)
{
	long id;

	if (!eat(d, 'S'))
		return fail(d);
	if (peek(d, 0) >= 'a' && peek(d, 0) <= 'z') {
		int c = peek(d, 0);
		size_t i;

		d->p++;
		for (i = 0; i < sizeof(abbreviations) / sizeof(abbreviations[0]); i++)
			if (c == abbreviations[i].code) {
				int whole = prefix && (peek(d, 0) == 'C' || peek(d, 0) == 'D');

				d->last_name = text_node(d, abbreviations[i].ctor, -1);
				return text_node(d, whole ? abbreviations[i].full : abbreviations[i].simple, -1);
			}
		return fail(d);
	}
	id = seq_id(d);
	if (id < 0 || id >= d->ns)
		return fail(d);
	return d->subs[id];
}

/* T_, T<n>_: the encoding's template argument */
static int template_param(struct dm *d)
{
	long id;
	int t;

	if (!eat(d, 'T'))
		return fail(d);
	id = seq_id(d);
	if (id < 0 || id >= 64)
		return fail(d);
	t = new_node(d, K_TPARAM, -1, -1);
	if (t >= 0)
		d->nodes[t].n = (int)id;
	return t;
}

/* N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E; the
 * prefixes are substitution candidates, the whole name is not (a type's
 * caller adds it) */
static int nested_name(struct dm *d, int *has_targs, int *cv)
{
	int cur = -1, quals = 0;

	if (!eat(d, 'N'))
		return fail(d);
	for (;;) {
		int q = peek(d, 0) == 'r' ? CV_RESTRICT : peek(d, 0) == 'V' ? CV_VOLATILE :
			peek(d, 0) == 'K' ? CV_CONST : 0;

		if (!q)
			break;
		if (quals & q)
			return fail(d);     /* twice: no compiler's */
		quals |= q;
		d->p++;
	}
	if (eat(d, 'R'))
		quals |= REF_L;
	else if (eat(d, 'O'))
		quals |= REF_R;
	*cv = quals;
	*has_targs = 0;
	while (!eat(d, 'E')) {
		int c = peek(d, 0), n;

		if (d->failed || !c)
			return fail(d);
		*has_targs = 0;
		if (c == 'S' && peek(d, 1) == 't') {
			d->p += 2;
			if (cur >= 0)
				return fail(d);
			cur = text_node(d, "std", -1);
			continue;       /* std:: alone is no candidate */
		} else if (c == 'S') {
			if (cur >= 0)
				return fail(d);
			cur = substitution(d, 1);
			if (cur < 0)
				return -1;
			/* a prefix is a namespace or a class: not a cv-qualified,
			 * pointer or function type */
			if (d->nodes[cur].kind != K_TEXT && d->nodes[cur].kind != K_QUAL && d->nodes[cur].kind != K_TMPL &&
			    d->nodes[cur].kind != K_ABI && d->nodes[cur].kind != K_TPARAM)
				return fail(d);
			continue;       /* already one */
		} else if (c == 'T') {
			if (cur >= 0)
				return fail(d);
			n = template_param(d);
			cur = n;
		} else if (c == 'I') {
			if (cur < 0)
				return fail(d);
			cur = template_args(d, cur);
			*has_targs = 1;
			d->name_targs = cur;
		} else if (c == 'M') {
			/* a closure's data-member context: nothing printed */
			if (cur < 0 || peek(d, 1) == 'M' || peek(d, 1) == 'E')
				return fail(d);
			d->p++;
			continue;
		} else {
			n = unqualified_name(d);
			if (n < 0)
				return -1;
			cur = qual(d, cur, n);
		}
		if (cur < 0)
			return -1;
		if (peek(d, 0) != 'E')
			add_sub(d, cur);
	}
	return cur;
}

/* Z <encoding> E <entity name> [<discriminator>], or Z <encoding> E s */
static int local_name(struct dm *d, int *has_targs, int *cv)
{
	int fn, n, saved = d->targs;

	if (!eat(d, 'Z'))
		return fail(d);
	fn = encoding(d, 0);
	if (fn < 0 || !eat(d, 'E'))
		return fail(d);
	d->targs = saved;
	/* the enclosing function is printed without its return type */
	if (d->nodes[fn].kind == K_ENC)
		d->nodes[fn].b = -1;
	if (eat(d, 's'))
		n = text_node(d, "string literal", -1);
	else
		n = name(d, has_targs, cv);     /* a local class's method: its qualifiers */
	if (n < 0)
		return -1;
	if (eat(d, '_')) {
		if (eat(d, '_')) {
			if (number(d) < 0 || !eat(d, '_'))
				return fail(d);
		} else if (number(d) < 0) {
			return fail(d);
		}
	}
	return new_node(d, K_QUAL, fn, n);
}

/* <name>: nested, local, or unscoped (St, a substitution or none before
 * it), with template arguments */
static int name(struct dm *d, int *has_targs, int *cv)
{
	int c = peek(d, 0), n;

	*has_targs = 0;
	*cv = 0;
	if (c == 'N')
		return nested_name(d, has_targs, cv);
	if (c == 'Z')
		return local_name(d, has_targs, cv);
	if (c == 'S' && peek(d, 1) != 't') {
		/* a substitution: then its template arguments */
		n = substitution(d, 0);
		if (n < 0 || peek(d, 0) != 'I')
			return fail(d);
	} else {
		int std = 0;

		if (c == 'S') {
			d->p += 2;
			std = 1;
		}
		n = unqualified_name(d);
		if (n < 0)
			return -1;
		if (std)
			n = qual(d, text_node(d, "std", -1), n);
		if (peek(d, 0) != 'I')
			return n;
		add_sub(d, n);      /* an unscoped template name is a candidate */
	}
	n = template_args(d, n);
	*has_targs = 1;
	d->name_targs = n;
	return n;
}

static const struct { char code; const char *name; } builtins[] = {
	{ 'v', "void" }, { 'w', "wchar_t" }, { 'b', "bool" }, { 'c', "char" }, { 'a', "signed char" },
	{ 'h', "unsigned char" }, { 's', "short" }, { 't', "unsigned short" }, { 'i', "int" },
	{ 'j', "unsigned int" }, { 'l', "long" }, { 'm', "unsigned long" }, { 'x', "long long" },
	{ 'y', "unsigned long long" }, { 'n', "__int128" }, { 'o', "unsigned __int128" }, { 'f', "float" },
	{ 'd', "double" }, { 'e', "long double" }, { 'g', "__float128" }, { 'z', "..." },
};

static const struct { char code; const char *name; } dbuiltins[] = {
	{ 'd', "decimal64" }, { 'e', "decimal128" }, { 'f', "decimal32" }, { 'h', "half" },
	{ 'u', "char8_t" }, { 's', "char16_t" }, { 'i', "char32_t" }, { 'a', "auto" },
	{ 'c', "decltype(auto)" }, { 'n', "decltype(nullptr)" },
};

/* F [Y] <return type> <parameter types> [<ref-qualifier>] E */
static int function_type(struct dm *d)
{
	int ret, f, params[64], np = 0, quals = 0;

	if (!eat(d, 'F'))
		return fail(d);
	eat(d, 'Y');
	ret = type(d);
	if (ret < 0)
		return -1;
	for (;;) {
		int t;

		if (eat(d, 'E'))
			break;
		if (peek(d, 0) == 'R' && peek(d, 1) == 'E') {
			d->p += 2;
			quals |= REF_L;
			break;
		}
		if (peek(d, 0) == 'O' && peek(d, 1) == 'E') {
			d->p += 2;
			quals |= REF_R;
			break;
		}
		t = type(d);
		if (t < 0 || np >= 64)
			return fail(d);
		params[np++] = t;
	}
	if (!np)
		return fail(d);     /* no parameter, not even v */
	f = list_node(d, K_FUNC, ret, params, np);
	if (f >= 0)
		d->nodes[f].n = quals;
	return f;
}

/* <CV-qualifiers> <type> (r V K, each once) */
static int cv_type(struct dm *d)
{
	int quals = 0, u, t, abominable;

	while (1) {
		int q = peek(d, 0) == 'r' ? CV_RESTRICT : peek(d, 0) == 'V' ? CV_VOLATILE :
			peek(d, 0) == 'K' ? CV_CONST : 0;

		if (!q)
			break;
		if (quals & q)
			return fail(d);
		quals |= q;
		d->p++;
	}
	/* cv-qualifiers before a function type are its `this`': the
	 * unqualified function type is no substitution candidate */
	abominable = peek(d, 0) == 'F';
	u = abominable ? function_type(d) : type(d);
	if (u < 0)
		return -1;
	t = new_node(d, K_CV, u, -1);
	if (t >= 0) {
		d->nodes[t].n = quals;
		d->nodes[t].len = abominable;   /* printed after the parameters */
	}
	return t;
}

/* P <type>, R <type>, O <type>: c is the letter, not yet taken */
static int pointer_type(struct dm *d, int c)
{
	int u;

	d->p++;
	/* a reference to a reference is no type a compiler mangles,
	 * written or substituted (only through a template parameter,
	 * which collapses when printed) */
	if (c != 'P' && (peek(d, 0) == 'R' || peek(d, 0) == 'O'))
		return fail(d);
	u = type(d);
	if (u < 0)
		return -1;
	if (c != 'P' && (d->nodes[u].kind == K_LREF || d->nodes[u].kind == K_RREF))
		return fail(d);
	return new_node(d, c == 'P' ? K_PTR : c == 'R' ? K_LREF : K_RREF, u, -1);
}

/* M <class type> <member type> */
static int member_pointer_type(struct dm *d)
{
	int cls, mem;

	d->p++;
	cls = type(d);
	if (cls < 0)
		return -1;
	mem = type(d);
	if (mem < 0)
		return -1;
	return new_node(d, K_PTRMEM, cls, mem);
}

/* A <dimension number> _ <element type> */
static int array_type(struct dm *d)
{
	const char *start;
	int u, t;

	d->p++;
	start = d->p;
	while (peek(d, 0) >= '0' && peek(d, 0) <= '9')
		d->p++;
	if (!eat(d, '_'))
		return fail(d);   /* a dimension that is an expression */
	u = type(d);
	if (u < 0)
		return -1;
	t = new_node(d, K_ARRAY, u, -1);
	if (t >= 0) {
		d->nodes[t].text = start;
		d->nodes[t].len = (int)(d->p - start);
		/* the length stops at its '_': counted from start */
		d->nodes[t].len = 0;
		while (start[d->nodes[t].len] >= '0' && start[d->nodes[t].len] <= '9')
			d->nodes[t].len++;
	}
	return t;
}

static int type_inner(struct dm *d)
{
	int c = peek(d, 0), t;
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (c == builtins[i].code) {
			d->p++;
			return text_node(d, builtins[i].name, -1);   /* builtins are no candidates */
		}
	switch (c) {
	case 'D':
		if (peek(d, 1) == 'p') {
			int u;

			d->p += 2;
			u = type(d);
			if (u < 0)
				return -1;
			t = new_node(d, K_PACKEXP, u, -1);
			break;
		}
		for (i = 0; i < sizeof(dbuiltins) / sizeof(dbuiltins[0]); i++)
			if (peek(d, 1) == dbuiltins[i].code) {
				d->p += 2;
				return text_node(d, dbuiltins[i].name, -1);
			}
		return fail(d);   /* decltype, pack expansions, vectors: not known */
	case 'r': case 'V': case 'K':
		t = cv_type(d);
		break;
	case 'P': case 'R': case 'O':
		t = pointer_type(d, c);
		break;
	case 'F':
		t = function_type(d);
		break;
	case 'M':
		t = member_pointer_type(d);
		break;
	case 'A':
		t = array_type(d);
		break;
	case 'T':
		t = template_param(d);
		if (t < 0)
			return -1;
		add_sub(d, t);
		if (peek(d, 0) != 'I')
			return t;
		t = template_args(d, t);    /* a template template parameter's: added too, below */
		break;
	case 'S':
		if (peek(d, 1) == 't') {
			int has, cv;

			t = name(d, &has, &cv);
			break;
		}
		t = substitution(d, 0);
		if (t < 0)
			return -1;
		if (peek(d, 0) != 'I')
			return t;       /* a substitution is not added again */
		t = template_args(d, t);
		break;
	case 'N': case 'Z': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
	case '8': case '9': case 'U': {
		int has, cv;

		t = name(d, &has, &cv);
		if (cv)
			return fail(d);     /* a method's qualifiers on a type */
		break;
	}
	default:
		return fail(d);    /* pointers to members, vendor qualifiers, ... */
	}
	if (t < 0)
		return -1;
	add_sub(d, t);
	return t;
}

static int type(struct dm *d)
{
	int t;

	if (++d->depth > 64)
		return fail(d);
	t = type_inner(d);
	d->depth--;
	return d->failed ? -1 : t;
}

/* Whether a function named n has its return type mangled: a template
 * function that is no constructor, destructor or conversion operator. */
static int has_return_type(const struct dm *d, int n, int has_targs)
{
	const struct node *x = &d->nodes[n];

	if (!has_targs)
		return 0;
	while (x->kind == K_TMPL || x->kind == K_ABI)
		x = &d->nodes[x->a];
	if (x->kind == K_QUAL)
		x = &d->nodes[x->b];
	while (x->kind == K_ABI)
		x = &d->nodes[x->a];
	return x->kind != K_DTOR && x->kind != K_CONV && !(x->kind == K_TEXT && x->n == TEXT_CTOR);
}

/* <special-name> */
static int special_name(struct dm *d)
{
	static const struct { const char *code; const char *text; } specials[] = {
		{ "TV", "vtable for " }, { "TT", "VTT for " }, { "TI", "typeinfo for " },
		{ "TS", "typeinfo name for " }, { "GV", "guard variable for " },
		{ "TH", "TLS init function for " }, { "TW", "TLS wrapper function for " },
	};
	size_t i;
	int t, s;

	for (i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (peek(d, 0) == specials[i].code[0] && peek(d, 1) == specials[i].code[1]) {
			int has, cv;

			d->p += 2;
			if (specials[i].code[0] == 'T' && specials[i].code[1] != 'H' && specials[i].code[1] != 'W')
				t = type(d);
			else
				t = name(d, &has, &cv);
			if (t < 0)
				return -1;
			s = new_node(d, K_SPECIAL, t, -1);
			if (s >= 0)
				d->nodes[s].text = specials[i].text;
			return s;
		}
	if (peek(d, 0) == 'T' && (peek(d, 1) == 'h' || peek(d, 1) == 'v')) {
		/* thunks: Th <offset> _ <encoding>, Tv <offset> _ <offset> _ <encoding> */
		int virt = peek(d, 1) == 'v', parts = virt ? 2 : 1;

		d->p += 2;
		while (parts--) {
			eat(d, 'n');
			if (number(d) < 0 || !eat(d, '_'))
				return fail(d);
		}
		t = encoding(d, 0);
		if (t < 0)
			return -1;
		s = new_node(d, K_SPECIAL, t, -1);
		if (s >= 0)
			d->nodes[s].text = virt ? "virtual thunk to " : "non-virtual thunk to ";
		return s;
	}
	return fail(d);
}

/* <encoding> ::= <name> [<bare-function-type>] | <special-name> */
static int encoding(struct dm *d, int top)
{
	int n, has_targs, cv, e, params[64], np = 0, ret = -1, saved_targs = d->targs;

	if (peek(d, 0) == 'T' || (peek(d, 0) == 'G' && peek(d, 1) == 'V'))
		return special_name(d);
	d->name_targs = -1;
	n = name(d, &has_targs, &cv);
	if (n < 0)
		return -1;
	/* T_ in the signature: the function's own template arguments */
	d->targs = has_targs ? d->name_targs : -1;     /* before the types' names set name_targs again */
	/* a data object: no parameters (nor a method's qualifiers) */
	if (d->p >= d->end || peek(d, 0) == 'E' || (top && peek(d, 0) == '.')) {
		if (cv)
			return fail(d);
		d->targs = saved_targs;
		return n;
	}
	if (has_return_type(d, n, has_targs)) {
		ret = type(d);
		if (ret < 0)
			return -1;
	}
	while (d->p < d->end && peek(d, 0) != 'E' && peek(d, 0) != '.') {
		int t = type(d);

		if (t < 0 || np >= 64)
			return fail(d);
		params[np++] = t;
	}
	if (!np)
		return fail(d);     /* a return type, then no parameter (not even v) */
	e = list_node(d, K_ENC, n, params, np);
	if (e < 0)
		return -1;
	d->nodes[e].b = ret;
	d->nodes[e].n = cv;
	d->nodes[e].t = d->targs;
	/* f(void) is printed f() */
	if (np == 1 && d->nodes[params[0]].kind == K_TEXT && d->nodes[params[0]].len == 4 &&
	    !memcmp(d->nodes[params[0]].text, "void", 4))
		d->nodes[e].nkids = 0;
	d->targs = saved_targs;
	return e;
}

/* --- printing --- */

static void put(struct dm *d, const char *s, size_t n)
{
	if (d->pos + n >= d->cap) {
		d->failed = 1;
		return;
	}
	memcpy(d->out + d->pos, s, n);
	d->pos += n;
	d->out[d->pos] = 0;
	if (n)
		d->last_taken_back = 0;
}

static void puts_(struct dm *d, const char *s)
{
	put(d, s, strlen(s));
}

static char last(const struct dm *d)
{
	if (d->last_taken_back)
		return d->last_taken_back;
	return d->pos ? d->out[d->pos - 1] : 0;
}

static void print(struct dm *d, int n);

/* n, a template parameter's argument (-1: none), or the element printed
 * of the pack n while its expansion prints */
static int resolve(const struct dm *d, int n)
{
	int steps = 0;

	while (n >= 0 && steps++ < 16) {
		const struct node *x = &d->nodes[n];

		if (x->kind == K_TPARAM) {
			const struct node *t;

			if (d->print_targs < 0)
				return -1;
			t = &d->nodes[d->print_targs];
			if (x->n >= t->nkids)
				return -1;
			n = d->kids[t->kid0 + x->n];
		} else if (x->kind == K_PACK && d->pack == n) {
			n = d->kids[x->kid0 + d->pack_index];
		} else {
			return n;
		}
	}
	return -1;
}

/* The pack a pack expansion expands: the first inside it, or -1. */
static int find_pack(struct dm *d, int n, int depth)
{
	const struct node *x;
	int i, p;

	if (n < 0 || depth > 64 || spend(d))
		return -1;
	x = &d->nodes[n];
	switch (x->kind) {
	case K_PACK:
		return n;
	case K_TPARAM:
		n = resolve(d, n);
		return n < 0 || d->nodes[n].kind == K_TPARAM ? -1 : find_pack(d, n, depth + 1);
	case K_PACKEXP:
		return -1;      /* its own */
	case K_TMPL: case K_FUNC: case K_ENC: case K_LAMBDA:
		if ((p = find_pack(d, x->a, depth + 1)) >= 0)
			return p;
		for (i = 0; i < x->nkids; i++)
			if ((p = find_pack(d, d->kids[x->kid0 + i], depth + 1)) >= 0)
				return p;
		return -1;
	case K_TEXT: case K_UNNAMED:
		return -1;
	default:
		if ((p = find_pack(d, x->a, depth + 1)) >= 0)
			return p;
		return find_pack(d, x->b, depth + 1);
	}
}

/* How many items n prints as: a pack its elements, a pack expansion its
 * pack's (an empty one prints nothing, and no comma). */
static int items(struct dm *d, int n, int depth)
{
	const struct node *x;

	if (depth > 64 || spend(d) || (n = resolve(d, n)) < 0)
		return 1;       /* not resolved, or given up: print() fails */
	x = &d->nodes[n];

	if (x->kind == K_PACK && d->pack != n) {
		int i, sum = 0;

		for (i = 0; i < x->nkids; i++)
			sum += items(d, d->kids[x->kid0 + i], depth + 1);
		return sum;
	}
	if (x->kind == K_PACKEXP) {
		int p = find_pack(d, x->a, 0);

		return p < 0 ? 1 : d->nodes[p].nkids;
	}
	return 1;
}

/* a, b, c; as the C++ library's demangler prints a list, an item that
 * prints nothing (an empty pack) takes back the ", " before it, none
 * being before the first: `f<, int>` of an empty pack and int */
static void print_list(struct dm *d, int kid0, int nkids)
{
	int i, trailing = 0;

	for (i = 0; i < nkids; i++) {
		int k = d->kids[kid0 + i];

		if (i)
			puts_(d, ", ");
		if (!items(d, k, 0)) {
			trailing++;
			continue;
		}
		trailing = 0;
		print(d, k);
	}
	/* the ", " before each of a trailing run of empty items, taken back
	 * (one before an empty item inside the list stays: `f(a, , b)`) */
	if (trailing == nkids)
		trailing--;     /* the first had none */
	while (trailing-- > 0 && d->pos >= 2 && !d->failed) {
		d->pos -= 2;
		d->out[d->pos] = 0;
		d->last_taken_back = ' ';
	}
}

/* A function type's parameters: (void) is () */
static void print_params(struct dm *d, const struct node *f)
{
	print_list(d, f->kid0, f->nkids == 1 && is_void(d, d->kids[f->kid0]) ? 0 : f->nkids);
}

static void print_cv(struct dm *d, int quals)
{
	if (quals & CV_CONST)
		puts_(d, " const");
	if (quals & CV_VOLATILE)
		puts_(d, " volatile");
	if (quals & CV_RESTRICT)
		puts_(d, " restrict");
	if (quals & REF_L)
		puts_(d, " &");
	if (quals & REF_R)
		puts_(d, " &&");
}


/* A pointer, reference or cv-qualifier chain down to a function or an
 * array prints inside out: `int (*)(void*, int)`, `char const (&) [4]`. */
static int declarator_base(const struct dm *d, int n)
{
	int steps = 0;

	while (n >= 0 && steps++ < 64) {
		const struct node *x;

		if ((n = resolve(d, n)) < 0)
			return -1;
		x = &d->nodes[n];
		if (x->kind == K_PTR || x->kind == K_LREF || x->kind == K_RREF || x->kind == K_CV)
			n = x->a;
		else
			return (x->kind == K_FUNC || x->kind == K_ARRAY) ? n : -1;
	}
	return -1;
}

/* The chain's pointers and references, innermost (next to the function
 * or array) first, references collapsing; an array's cv-qualifiers are its
 * elements' (printed by the caller: only_cv), a function's pointers' stay
 * in place. Returns the cv bits met. */
static int print_modifiers(struct dm *d, int n, int base, int array)
{
	int chain[64], via[64], k = 0, i, cv = 0;

	while (n >= 0 && k < 64) {
		int r = resolve(d, n);

		if (r == base || r < 0)
			break;
		via[k] = 1;             /* a reference inside a reference came by a substitution or T_ */
		chain[k++] = r;
		n = d->nodes[r].a;
	}
	/* a function's own qualifiers (next to it: `(&)(int) const`) are
	 * printed after its parameters: returned, as an array's are */
	if (!array)
		while (k > 0 && d->nodes[chain[k - 1]].kind == K_CV && d->nodes[chain[k - 1]].len)
			cv |= d->nodes[chain[--k]].n;
	for (i = k - 1; i >= 0; i--) {
		const struct node *x = &d->nodes[chain[i]];
		/* references collapse, as the C++ library's demangler does */
		int outer_ref = i > 0 && via[i] &&
			(d->nodes[chain[i - 1]].kind == K_LREF || d->nodes[chain[i - 1]].kind == K_RREF);

		if (x->kind == K_PTR)
			puts_(d, "*");
		else if (x->kind == K_LREF)
			puts_(d, outer_ref ? "" : "&");
		else if (x->kind == K_RREF)
			/* && then & outside it: & (the outer one prints it) */
			puts_(d, outer_ref ? "" : "&&");
		else if (array)
			cv |= x->n;
		else
			print_cv(d, x->n);
		if ((x->kind == K_LREF || x->kind == K_RREF) && outer_ref) {
			/* T& &&, T& &: &; T&& &&: &&; T&& &: & */
			const struct node *o = &d->nodes[chain[i - 1]];

			puts_(d, (x->kind == K_RREF && o->kind == K_RREF) ? "&&" : "&");
			i--;
		}
	}
	return cv;
}

static int cv_only(const struct dm *d, int n, int base)
{
	while ((n = resolve(d, n)) != base && n >= 0) {
		if (d->nodes[n].kind != K_CV)
			return 0;
		n = d->nodes[n].a;
	}
	return 1;
}

/* The cv-qualifiers of a chain of them down to base, together */
static int chain_cv(const struct dm *d, int n, int base)
{
	int cv = 0;

	while ((n = resolve(d, n)) != base && n >= 0) {
		cv |= d->nodes[n].n;
		n = d->nodes[n].a;
	}
	return cv;
}

/* A chain down to a function type (base): `void (int) const` of an
 * abominable function type, `int (*)(void*, int)` */
static void print_around_function(struct dm *d, int n, int base)
{
	const struct node *b = &d->nodes[base];
	int own;

	if (cv_only(d, n, base)) {
		print(d, base);
		print_cv(d, chain_cv(d, n, base));
		return;
	}
	print(d, b->a);
	puts_(d, " (");
	own = print_modifiers(d, n, base, 0);
	puts_(d, ")(");
	print_params(d, b);
	puts_(d, ")");
	print_cv(d, b->n | own);
}

/* A chain down to an array type (base): `char const (&) [4]`; the
 * cv-qualifiers of an array are its elements' */
static void print_around_array(struct dm *d, int n, int base)
{
	const struct node *b = &d->nodes[base];
	int pos, cv;

	print(d, b->a);
	if (cv_only(d, n, base)) {
		print_cv(d, chain_cv(d, n, base));
		puts_(d, " [");
	} else {
		pos = (int)d->pos;
		puts_(d, " (");
		cv = print_modifiers(d, n, base, 1);
		if (cv) {
			/* moved before the parenthesis */
			char mods[256];
			size_t len = d->pos - (size_t)pos;

			if (len >= sizeof(mods)) {
				d->failed = 1;
				return;
			}
			memcpy(mods, d->out + pos, len);
			d->pos = (size_t)pos;
			print_cv(d, cv);
			put(d, mods, len);
		}
		puts_(d, ") [");
	}
	put(d, b->text, (size_t)b->len);
	puts_(d, "]");
}

/* A pointer, a reference or cv-qualifiers (node n) */
static void print_modified(struct dm *d, int n)
{
	const struct node *x = &d->nodes[n];
	int base = declarator_base(d, n);

	if (base >= 0) {
		if (d->nodes[base].kind == K_FUNC)
			print_around_function(d, n, base);
		else
			print_around_array(d, n, base);
		return;
	}
	if (x->kind == K_CV) {
		/* const of a const type: once */
		int c = resolve(d, x->a);

		if (c < 0) {
			d->failed = 1;
			return;
		}
		if (d->nodes[c].kind == K_CV) {
			print(d, d->nodes[c].a);
			print_cv(d, x->n | d->nodes[c].n);
			return;
		}
	}
	if (x->kind == K_LREF || x->kind == K_RREF) {
		/* references collapse (T& &&: T&): through a
		 * substitution, a template parameter or a pack's element
		 * (written directly, R R is refused when parsed) */
		int c = resolve(d, x->a);

		if (c < 0) {
			d->failed = 1;
			return;
		}
		if (d->nodes[c].kind == K_LREF || (d->nodes[c].kind == K_RREF && x->kind == K_RREF)) {
			print(d, c);
			return;
		}
		if (d->nodes[c].kind == K_RREF) {
			print(d, d->nodes[c].a);
			puts_(d, "&");
			return;
		}
	}
	print(d, x->a);
	if (x->kind == K_PTR)
		puts_(d, "*");
	else if (x->kind == K_LREF)
		puts_(d, "&");
	else if (x->kind == K_RREF)
		puts_(d, "&&");
	else
		print_cv(d, x->n);
}

/* A literal template argument: 5, 5u, -3l, true, (char)65 */
static void print_literal(struct dm *d, const struct node *x)
{
	const struct node *t = &d->nodes[x->a];
	const char *suffix = NULL;

	if (t->kind == K_TEXT && !t->n) {
		static const char *const sfx[][2] = {
			{ "int", "" }, { "unsigned int", "u" }, { "long", "l" }, { "unsigned long", "ul" },
			{ "long long", "ll" }, { "unsigned long long", "ull" },
		};
		size_t i;

		if (t->len == 4 && !memcmp(t->text, "bool", 4) && x->len == 1 && !x->n &&
		    (x->text[0] == '0' || x->text[0] == '1')) {
			puts_(d, x->text[0] == '1' ? "true" : "false");
			return;
		}
		for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
			if ((size_t)t->len == strlen(sfx[i][0]) && !memcmp(t->text, sfx[i][0], (size_t)t->len))
				suffix = sfx[i][1];
	}
	if (!suffix) {
		puts_(d, "(");
		print(d, x->a);
		puts_(d, ")");
	}
	if (x->n)
		puts_(d, "-");
	put(d, x->text, (size_t)x->len);
	if (suffix)
		puts_(d, suffix);
}

/* Dp: its pattern once for each element of the pack inside it */
static void print_pack_expansion(struct dm *d, const struct node *x)
{
	int p = find_pack(d, x->a, 0), i, saved = d->pack, saved_index = d->pack_index;

	if (p < 0) {
		print(d, x->a);
		return;
	}
	for (i = 0; i < d->nodes[p].nkids; i++) {
		if (i)
			puts_(d, ", ");
		d->pack = p;
		d->pack_index = i;
		print(d, x->a);
	}
	d->pack = saved;
	d->pack_index = saved_index;
}

/* A pointer to a member: `int C::*`, `bool (C::*)() const` */
static void print_member_pointer(struct dm *d, const struct node *x)
{
	int mi = resolve(d, x->b), cv = 0;
	const struct node *m;

	if (mi < 0) {
		d->failed = 1;
		return;
	}
	m = &d->nodes[mi];
	if (m->kind == K_CV && d->nodes[m->a].kind == K_FUNC) {
		/* a const member function: bool (C::*)() const */
		cv = m->n;
		m = &d->nodes[m->a];
	}
	if (m->kind == K_FUNC) {
		print(d, m->a);
		puts_(d, " (");
		print(d, x->a);
		puts_(d, "::*)(");
		print_params(d, m);
		puts_(d, ")");
		print_cv(d, m->n | cv);
	} else {
		print(d, x->b);
		puts_(d, " ");
		print(d, x->a);
		puts_(d, "::*");
	}
}

/* A function: [return type ]name(parameters)[ const], its template
 * parameters resolving against its own template arguments */
static void print_encoding(struct dm *d, const struct node *x)
{
	int saved = d->print_targs;

	if (x->t >= 0)
		d->print_targs = x->t;
	if (x->b >= 0) {
		print(d, x->b);
		puts_(d, " ");
	}
	print(d, x->a);
	puts_(d, "(");
	print_list(d, x->kid0, x->nkids);
	puts_(d, ")");
	print_cv(d, x->n);
	d->print_targs = saved;
}

static void print(struct dm *d, int n)
{
	const struct node *x;

	if (n < 0 || spend(d) || ++d->depth > 256) {
		d->failed = 1;
		return;
	}
	x = &d->nodes[n];
	switch (x->kind) {
	case K_TEXT:
		if (x->n == TEXT_OPERATOR)
			puts_(d, "operator");
		if (x->n == TEXT_OPERATOR && x->text[0] >= 'a' && x->text[0] <= 'z')
			puts_(d, " ");
		put(d, x->text, (size_t)x->len);
		break;
	case K_QUAL:
		print(d, x->a);
		puts_(d, "::");
		print(d, x->b);
		break;
	case K_TMPL:
		print(d, x->a);
		if (last(d) == '<')
			puts_(d, " ");     /* operator<< <char> */
		puts_(d, "<");
		print_list(d, x->kid0, x->nkids);
		if (last(d) == '>')
			puts_(d, " ");
		puts_(d, ">");
		break;
	case K_PTR: case K_LREF: case K_RREF: case K_CV:
		print_modified(d, n);
		break;
	case K_FUNC:
		print(d, x->a);
		puts_(d, " (");
		print_params(d, x);
		puts_(d, ")");
		print_cv(d, x->n);
		break;
	case K_ARRAY:
		print(d, x->a);
		puts_(d, " [");
		put(d, x->text, (size_t)x->len);
		puts_(d, "]");
		break;
	case K_LIT:
		print_literal(d, x);
		break;
	case K_ABI: case K_CLONE:
		print(d, x->a);
		puts_(d, x->kind == K_ABI ? "[abi:" : " [clone ");
		put(d, x->text, (size_t)x->len);
		puts_(d, "]");
		break;
	case K_SPECIAL:
		puts_(d, x->text);
		print(d, x->a);
		break;
	case K_PACK:
		if (d->pack == n)
			print(d, d->kids[x->kid0 + d->pack_index]);
		else
			print_list(d, x->kid0, x->nkids);
		break;
	case K_PACKEXP:
		print_pack_expansion(d, x);
		break;
	case K_PTRMEM:
		print_member_pointer(d, x);
		break;
	case K_ENC:
		print_encoding(d, x);
		break;
	case K_TPARAM: {
		int r = resolve(d, n);

		/* a pack stands alone only in template arguments (J), expanded
		 * elsewhere (Dp) */
		if (r < 0 || r == n || (d->nodes[r].kind == K_PACK && d->pack != r))
			d->failed = 1;
		else
			print(d, r);
		break;
	}
	case K_LAMBDA: {
		char num[16];

		puts_(d, "{lambda(");
		print_list(d, x->kid0, x->nkids);
		snprintf(num, sizeof(num), ")#%d}", x->n);
		puts_(d, num);
		break;
	}
	case K_UNNAMED: {
		char num[32];

		snprintf(num, sizeof(num), "{unnamed type#%d}", x->n);
		puts_(d, num);
		break;
	}
	case K_CONV:
		puts_(d, "operator ");
		print(d, x->a);
		break;
	case K_DTOR:
		puts_(d, "~");
		print(d, x->a);
		break;
	}
	d->depth--;
}

/* .isra.0, .constprop.0.isra.0, .cold, .part.0: each word with its numbers
 * one clone */
static int clone_suffixes(struct dm *d, int n)
{
	while (n >= 0 && peek(d, 0) == '.') {
		const char *start = d->p;
		int c;

		d->p++;
		if (!((c = peek(d, 0)) >= 'a' && c <= 'z') && c != '_')
			return fail(d);
		while (((c = peek(d, 0)) >= 'a' && c <= 'z') || c == '_')
			d->p++;
		while (peek(d, 0) == '.' && peek(d, 1) >= '0' && peek(d, 1) <= '9') {
			d->p++;
			while (peek(d, 0) >= '0' && peek(d, 0) <= '9')
				d->p++;
		}
		n = new_node(d, K_CLONE, n, -1);
		if (n >= 0) {
			d->nodes[n].text = start;
			d->nodes[n].len = (int)(d->p - start);
		}
	}
	return n;
}

int plyc_demangle(const char *mangled, char *out, size_t len)
{
	static struct dm dm;    /* 30 KB: off the stack; the tracer prints from one thread */
	struct dm *d = &dm;
	int n;

	if (!mangled || strncmp(mangled, "_Z", 2) || !len)
		return -1;
	memset(d, 0, offsetof(struct dm, nodes));
	d->p = mangled + 2;
	d->end = mangled + strlen(mangled);
	d->nn = d->nk = d->ns = 0;
	d->targs = -1;
	d->last_name = -1;
	d->pack = -1;
	d->print_targs = -1;
	n = encoding(d, 1);
	if (n >= 0 && peek(d, 0) == '.' && d->nodes[n].kind != K_ENC)
		return -1;          /* a clone of a data object */
	n = clone_suffixes(d, n);
	if (n < 0 || d->failed || d->p != d->end)
		return -1;
#ifdef DM_DEBUG
	{
		int i;

		for (i = 0; i < d->ns; i++) {
			char tmp[4096];

			d->out = tmp;
			d->cap = sizeof(tmp);
			d->pos = 0;
			tmp[0] = 0;
			print(d, d->subs[i]);
			fprintf(stderr, "S%d: %s\n", i, tmp);
		}
	}
#endif
	d->out = out;
	d->cap = len;
	d->pos = 0;
	d->depth = 0;
	d->work = 0;
	out[0] = 0;
	print(d, n);
	if (d->failed) {
		out[0] = 0;
		return -1;
	}
	return 0;
}
