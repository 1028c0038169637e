TITLE = "Day of the Week"
DIFFICULTY = "medium"
TAGS = ["implementation", "math"]
STATEMENT = """
Given a date of the Gregorian calendar, print its day of the week. The Gregorian leap-year
rule applies: a year is a leap year if it is divisible by 4, except years divisible by 100
that are not divisible by 400. January 1st of year 2000 was a Saturday.

Input: the first line contains q, the number of dates. Each of the next q lines contains a
date as three integers: day, month, year.
Output: for each date, the English name of its weekday (Monday .. Sunday), one per line.
Constraints: 1 <= q <= 1000, 1600 <= year <= 2400, every date is valid.
"""
PUBLIC = ["3\n1 1 2000\n29 2 2024\n25 12 2023\n", "1\n4 7 1976\n"]


def hidden(rng):
    import calendar
    def rand_date():
        y = rng.randint(1600, 2400)
        m = rng.randint(1, 12)
        return f"{rng.randint(1, calendar.monthrange(y, m)[1])} {m} {y}"
    fixed = ["1 3 1900", "28 2 1900", "1 3 2100", "29 2 2000", "1 1 1600", "31 12 2400",
             "1 3 1700", "15 10 1800", "29 2 2400", "1 3 2200"]
    tests = [f"1\n{d}\n" for d in fixed[:8]]
    tests.append(f"{len(fixed)}\n" + "\n".join(fixed) + "\n")
    tests.append("50\n" + "\n".join(rand_date() for _ in range(50)) + "\n")
    return tests + ["1000\n" + "\n".join(rand_date() for _ in range(1000)) + "\n"]


REF_PY = r'''
import sys
NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
def leap(y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
def days_before(d, m, y):
    total = 0
    for yy in range(1600, y):
        total += 366 if leap(yy) else 365
    lens = [31, 29 if leap(y) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return total + sum(lens[:m - 1]) + d - 1
data = sys.stdin.read().split()
q = int(data[0])
base = days_before(1, 1, 2000)
out = []
for i in range(q):
    d, m, y = map(int, data[1 + 3 * i: 4 + 3 * i])
    out.append(NAMES[(5 + days_before(d, m, y) - base) % 7])
print("\n".join(out))
'''
REF_CPP = r'''
#include <cstdio>
const char* NAMES[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};
bool leap(int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }
long days_before(int d, int m, int y) {
    long total = 0;
    for (int yy = 1600; yy < y; yy++) total += leap(yy) ? 366 : 365;
    int lens[] = {31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (int i = 0; i < m - 1; i++) total += lens[i];
    return total + d - 1;
}
int main() {
    int q; scanf("%d", &q);
    long base = days_before(1, 1, 2000);
    while (q--) {
        int d, m, y; scanf("%d %d %d", &d, &m, &y);
        long diff = days_before(d, m, y) - base;
        printf("%s\n", NAMES[((5 + diff) % 7 + 7) % 7]);
    }
}
'''
WRONG_PY = r'''
import sys
NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
def leap(y):
    return y % 4 == 0
def days_before(d, m, y):
    total = 0
    for yy in range(1600, y):
        total += 366 if leap(yy) else 365
    lens = [31, 29 if leap(y) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return total + sum(lens[:m - 1]) + d - 1
data = sys.stdin.read().split()
q = int(data[0])
base = days_before(1, 1, 2000)
out = []
for i in range(q):
    d, m, y = map(int, data[1 + 3 * i: 4 + 3 * i])
    out.append(NAMES[(5 + days_before(d, m, y) - base) % 7])
print("\n".join(out))
'''
