TITLE = "Power Modulo"
DIFFICULTY = "easy"
TAGS = ["number theory"]
STATEMENT = """
For each query print a^b mod m.

Input: the first line contains q; each of the next q lines contains a, b and m.
Output: q lines.
Constraints: 1 <= q <= 1000, 0 <= a <= 10^18, 0 <= b <= 10^18, 1 <= m <= 10^9.
"""
PUBLIC = ["3\n2 10 1000\n3 0 7\n5 3 13\n", "1\n10 18 1000000007\n"]


def hidden(rng):
    fixed = ["1\n7 0 1\n", "1\n0 0 5\n", "1\n0 5 5\n", "1\n123 456 1\n", "1\n1000000000000000000 1000000000000000000 999999937\n",
             "1\n2 1000000000000000000 1000000000\n", "2\n5 0 1\n5 1 1\n"]
    def row():
        return f"{rng.randint(0, 10**18)} {rng.randint(0, 10**18)} {rng.choice([1, 2, rng.randint(1, 10**9)])}"
    return fixed + ["20\n" + "\n".join(row() for _ in range(20)) + "\n", "200\n" + "\n".join(row() for _ in range(200)) + "\n",
                    "1000\n" + "\n".join(row() for _ in range(1000)) + "\n"]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
print("\n".join(str(pow(d[1 + 3 * i], d[2 + 3 * i], d[3 + 3 * i])) for i in range(d[0])))
'''
REF_CPP = r'''
#include <cstdio>
typedef unsigned long long ull;
int main() {
    int q; scanf("%d", &q);
    while (q--) {
        ull a, b, m; scanf("%llu %llu %llu", &a, &b, &m);
        ull r = 1 % m; a %= m;
        while (b) { if (b & 1) r = r * a % m; a = a * a % m; b >>= 1; }
        printf("%llu\n", r);
    }
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
out = []
for i in range(d[0]):
    a, b, m = d[1 + 3 * i: 4 + 3 * i]
    out.append(1 if b == 0 else pow(a, b, m))
print("\n".join(map(str, out)))
'''
