/* The line a Python function is defined at, found in its file's text as
 * the interpreter names it (stacks/pyline.c): methods, nested functions
 * and classes, decorators, async defs, a method after a nested class,
 * and what only looks like a def
 * (in a string, in a bracket). */
#include <string.h>

#include "stacks/pyline.h"
#include "tp_test.h"

static const char src[] =
	"\"\"\"Module docstring.\n"			/* 1 */
	"def not_this(): a def inside the docstring\n"	/* 2 */
	"\"\"\"\n"					/* 3 */
	"import os\n"					/* 4 */
	"\n"						/* 5 */
	"def top(a,\n"					/* 6 */
	"        b):\n"					/* 7 */
	"    def inner():\n"				/* 8 */
	"        return 1\n"				/* 9 */
	"    return inner\n"				/* 10 */
	"\n"						/* 11 */
	"class Model:\n"				/* 12 */
	"    @staticmethod\n"				/* 13 */
	"    @other(x=(1,\n"				/* 14 */
	"             2))\n"				/* 15 */
	"    def decode(self):\n"			/* 16 */
	"        s = '''\n"				/* 17 */
	"def fake(): pass\n"				/* 18 */
	"'''\n"						/* 19 */
	"        return s\n"				/* 20 */
	"\n"						/* 21 */
	"    async def fetch(self):\n"			/* 22 */
	"        class Local:\n"			/* 23 */
	"            def run(self): pass\n"		/* 24 */
	"    def tabbed(self): pass\n"			/* 25 */
	"x = [\n"					/* 26 */
	"def_like_name for y in z]\n"			/* 27 */
	"def after(): pass  # def comment(): no\n";	/* 28 */

static void want(const char *qual, unsigned line)
{
	char name[160];

	snprintf(name, sizeof(name), "pyline: %s", qual);
	TP_CHECK_INT(name, tp_pyline_in(src, sizeof(src) - 1, qual,
					strlen(qual)), line);
}

int main(void)
{
	want("<module>", 1);
	want("top", 6);
	want("top.<locals>.inner", 8);
	want("Model", 12);
	want("Model.decode", 13);
	want("Model.fetch", 22);
	want("Model.fetch.<locals>.Local", 23);
	want("Model.fetch.<locals>.Local.run", 24);
	want("Model.tabbed", 25);
	want("after", 28);
	want("not_this", 0);
	want("fake", 0);
	want("comment", 0);
	want("inner", 0);
	want("top.inner", 0);
	return TP_TEST_DONE();
}
