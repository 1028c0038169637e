TITLE = "Clock Arithmetic"
DIFFICULTY = "easy"
TAGS = ["implementation"]
STATEMENT = """
A 24-hour clock shows the time HH:MM. What does it show m minutes later?

Input: one line with the time HH:MM (00 <= HH <= 23, 00 <= MM <= 59) and an integer m.
Output: the new time in the same HH:MM format, with leading zeros.
Constraints: 0 <= m <= 10^9.
"""
PUBLIC = ["12:34 100\n", "20:00 900\n"]


def hidden(rng):
    tests = ["00:00 0\n", "23:59 1\n", "09:05 0\n", "10:00 1440\n", "23:00 61\n",
             "00:01 1000000000\n", "11:11 59\n", "13:07 2879\n"]
    tests += [f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {rng.randint(0, 10**9)}\n"
              for _ in range(3)]
    return tests + ["23:59 1000000000\n"]


REF_PY = r'''
t, m = input().split()
h, mm = map(int, t.split(":"))
total = (h * 60 + mm + int(m)) % 1440
print(f"{total // 60:02d}:{total % 60:02d}")
'''
REF_CPP = r'''
#include <cstdio>
int main() {
    int h, mm; long long m;
    scanf("%d:%d %lld", &h, &mm, &m);
    long long t = (h * 60 + mm + m) % 1440;
    printf("%02lld:%02lld\n", t / 60, t % 60);
}
'''
WRONG_PY = r'''
t, m = input().split()
h, mm = map(int, t.split(":"))
total = (h * 60 + mm + int(m)) % 1440
print(f"{total // 60}:{total % 60:02d}")
'''
