TITLE = "Rectangle Sums"
DIFFICULTY = "medium"
TAGS = ["prefix sums"]
STATEMENT = """
Given an n x m grid of integers, answer q queries: the sum of the rectangle with opposite
corners (r1, c1) and (r2, c2), where r1 <= r2 and c1 <= c2 (1-based, inclusive).

Input: the first line contains n, m and q. The next n lines contain m integers each. Each of
the next q lines contains r1 c1 r2 c2.
Output: q lines, one sum each.
Constraints: 1 <= n, m <= 100, 1 <= q <= 2000, -1000 <= values <= 1000.
"""
PUBLIC = ["2 2 2\n1 2\n3 4\n1 1 2 2\n2 1 2 2\n", "3 3 1\n1 1 1\n1 1 1\n1 1 1\n2 2 3 3\n"]


def hidden(rng):
    def case(n, m, q):
        rows = "\n".join(" ".join(str(rng.randint(-1000, 1000)) for _ in range(m)) for _ in range(n))
        qs = []
        for _ in range(q):
            r1, r2 = sorted((rng.randint(1, n), rng.randint(1, n)))
            c1, c2 = sorted((rng.randint(1, m), rng.randint(1, m)))
            qs.append(f"{r1} {c1} {r2} {c2}")
        return f"{n} {m} {q}\n{rows}\n" + "\n".join(qs) + "\n"
    tests = ["1 1 1\n-7\n1 1 1 1\n", "1 3 2\n1 2 3\n1 2 1 3\n1 1 1 1\n", "3 1 2\n4\n5\n6\n2 1 3 1\n1 1 3 1\n",
             "2 3 2\n1 2 3\n4 5 6\n1 2 2 3\n2 1 2 3\n", case(3, 5, 10), case(5, 3, 10), case(10, 20, 50),
             case(40, 7, 100), case(50, 100, 500)]
    return tests + [case(100, 100, 2000)]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, m, q = d[0], d[1], d[2]
P = [[0] * (m + 1) for _ in range(n + 1)]
p = 3
for i in range(1, n + 1):
    for j in range(1, m + 1):
        P[i][j] = d[p] + P[i - 1][j] + P[i][j - 1] - P[i - 1][j - 1]
        p += 1
out = []
for _ in range(q):
    r1, c1, r2, c2 = d[p:p + 4]
    p += 4
    out.append(P[r2][c2] - P[r1 - 1][c2] - P[r2][c1 - 1] + P[r1 - 1][c1 - 1])
print("\n".join(map(str, out)))
'''
REF_CPP = r'''
#include <cstdio>
long long P[105][105];
int main() {
    int n, m, q; scanf("%d %d %d", &n, &m, &q);
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            long long x; scanf("%lld", &x);
            P[i][j] = x + P[i - 1][j] + P[i][j - 1] - P[i - 1][j - 1];
        }
    while (q--) {
        int r1, c1, r2, c2; scanf("%d %d %d %d", &r1, &c1, &r2, &c2);
        printf("%lld\n", P[r2][c2] - P[r1 - 1][c2] - P[r2][c1 - 1] + P[r1 - 1][c1 - 1]);
    }
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, m, q = d[0], d[1], d[2]
P = [[0] * (n + 1) for _ in range(n + 1)]
p = 3
for i in range(1, n + 1):
    for j in range(1, m + 1):
        P[i][j] = d[p] + P[i - 1][j] + P[i][j - 1] - P[i - 1][j - 1]
        p += 1
out = []
for _ in range(q):
    r1, c1, r2, c2 = d[p:p + 4]
    p += 4
    out.append(P[r2][c2] - P[r1 - 1][c2] - P[r2][c1 - 1] + P[r1 - 1][c1 - 1])
print("\n".join(map(str, out)))
'''
