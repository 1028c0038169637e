TITLE = "Segment Sums"
DIFFICULTY = "easy"
TAGS = ["prefix sums"]
STATEMENT = """
Given an array a_1 .. a_n, answer q queries. Each query gives two positions x and y (in either
order); print the sum of the elements between them, both ends included.

Input: the first line contains n and q. The second line contains the array. Each of the next q
lines contains x and y.
Output: q lines, one sum each.
Constraints: 1 <= n, q <= 3000, 1 <= x, y <= n, -10^6 <= a_i <= 10^6.
"""
PUBLIC = ["5 3\n1 2 3 4 5\n1 5\n2 4\n3 3\n", "3 1\n-1 7 -2\n1 2\n"]


def hidden(rng):
    def case(n, q):
        a = " ".join(str(rng.randint(-10**6, 10**6)) for _ in range(n))
        qs = "\n".join(f"{rng.randint(1, n)} {rng.randint(1, n)}" for _ in range(q))
        return f"{n} {q}\n{a}\n{qs}\n"
    tests = ["1 1\n5\n1 1\n", "3 2\n1 2 3\n3 1\n2 1\n", "4 2\n-5 -5 -5 -5\n4 1\n1 4\n",
             "2 2\n1000000 -1000000\n2 1\n2 2\n", case(5, 5), case(10, 10), case(50, 100),
             case(300, 300), case(1000, 1000)]
    return tests + [case(3000, 3000)]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, q = d[0], d[1]
pre = [0]
for x in d[2:2 + n]:
    pre.append(pre[-1] + x)
out = []
for i in range(q):
    x, y = d[2 + n + 2 * i], d[3 + n + 2 * i]
    if x > y:
        x, y = y, x
    out.append(pre[y] - pre[x - 1])
print("\n".join(map(str, out)))
'''
REF_CPP = r'''
#include <cstdio>
#include <utility>
#include <vector>
int main() {
    int n, q; scanf("%d %d", &n, &q);
    std::vector<long long> pre(n + 1, 0);
    for (int i = 1; i <= n; i++) { long long x; scanf("%lld", &x); pre[i] = pre[i - 1] + x; }
    while (q--) {
        int x, y; scanf("%d %d", &x, &y);
        if (x > y) std::swap(x, y);
        printf("%lld\n", pre[y] - pre[x - 1]);
    }
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, q = d[0], d[1]
pre = [0]
for x in d[2:2 + n]:
    pre.append(pre[-1] + x)
out = []
for i in range(q):
    x, y = d[2 + n + 2 * i], d[3 + n + 2 * i]
    out.append(pre[y] - pre[x - 1])
print("\n".join(map(str, out)))
'''
