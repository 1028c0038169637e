TITLE = "Modular Inverse"
DIFFICULTY = "medium"
TAGS = ["number theory"]
STATEMENT = """
For each query (a, m) print the smallest x with 0 <= x < m and a*x mod m = 1, or -1 if no such
x exists. The modulus m need not be prime.

Input: the first line contains q; each of the next q lines contains a and m.
Output: q lines.
Constraints: 1 <= q <= 1000, 0 <= a <= 10^9, 2 <= m <= 10^9.
"""
PUBLIC = ["2\n3 7\n10 17\n", "1\n2 1000000007\n"]


def hidden(rng):
    def rows(q):
        return f"{q}\n" + "\n".join(f"{rng.randint(0, 10**9)} {rng.randint(2, 10**9)}" for _ in range(q)) + "\n"
    tests = ["1\n3 10\n", "1\n2 4\n", "1\n0 5\n", "1\n1 2\n", "1\n7 9\n", "1\n1000000000 999999999\n",
             "3\n5 12\n6 12\n7 12\n", rows(10), rows(100)]
    return tests + [rows(1000)]


REF_PY = r'''
import sys
from math import gcd
d = list(map(int, sys.stdin.read().split()))
out = []
for i in range(d[0]):
    a, m = d[1 + 2 * i], d[2 + 2 * i]
    out.append(pow(a, -1, m) if gcd(a, m) == 1 else -1)
print("\n".join(map(str, out)))
'''
REF_CPP = r'''
#include <cstdio>
typedef long long ll;
ll ext(ll a, ll b, ll& x, ll& y) {
    if (!b) { x = 1; y = 0; return a; }
    ll x1, y1, g = ext(b, a % b, x1, y1);
    x = y1; y = x1 - (a / b) * y1; return g;
}
int main() {
    int q; scanf("%d", &q);
    while (q--) {
        ll a, m, x, y; scanf("%lld %lld", &a, &m);
        ll g = ext(a % m, m, x, y);
        if (g != 1) puts("-1"); else printf("%lld\n", ((x % m) + m) % m);
    }
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
out = []
for i in range(d[0]):
    a, m = d[1 + 2 * i], d[2 + 2 * i]
    out.append(pow(a, m - 2, m) if a % m else -1)
print("\n".join(map(str, out)))
'''
