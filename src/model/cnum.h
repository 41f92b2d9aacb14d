/*
 * cnum.h - numbers in model files read and written in the "C" locale,
 * whatever locale the host program set: JSON and the topology format
 * always use a decimal point, and a host program under a decimal-comma
 * locale (setlocale(LC_ALL, "de_DE.UTF-8")) would otherwise read
 * "1.5e-6" as 1 and write "1,5".
 */
#ifndef HOP_MODEL_CNUM_H
#define HOP_MODEL_CNUM_H

#include <locale.h>

/* strtod() in the "C" locale (errno as strtod sets it). */
double hop_strtod_c(const char *s, char **end);

/* The calling thread in the "C" locale until hop_c_locale_leave(), for
 * printf of numbers; the thread's own locale is restored then. */
struct hop_c_locale {
	locale_t c, prev;
};
void hop_c_locale_enter(struct hop_c_locale *l);
void hop_c_locale_leave(struct hop_c_locale *l);

#endif /* HOP_MODEL_CNUM_H */
