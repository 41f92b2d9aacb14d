/*
 * cnum.c - the "C" locale for numbers in model files (cnum.h says why).
 * newlocale(LC_ALL_MASK, "C") is glibc's static C locale object (no
 * allocation); where it is not, the object is freed after each use.
 */
#include <errno.h>
#include <stdlib.h>

#include "model/cnum.h"

double hop_strtod_c(const char *s, char **end)
{
	locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	double v;

	if (c == (locale_t)0) {
		/* only without memory: the C locale always exists */
		if (end)
			*end = (char *)s;
		errno = ENOMEM;
		return 0;
	}
	v = strtod_l(s, end, c);
	freelocale(c);
	return v;
}

void hop_c_locale_enter(struct hop_c_locale *l)
{
	l->c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	l->prev = l->c != (locale_t)0 ? uselocale(l->c) : (locale_t)0;
}

void hop_c_locale_leave(struct hop_c_locale *l)
{
	if (l->c == (locale_t)0)
		return;
	uselocale(l->prev);
	freelocale(l->c);
	l->c = (locale_t)0;
}
