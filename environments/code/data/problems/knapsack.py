TITLE = "Backpack"
DIFFICULTY = "medium"
TAGS = ["dp"]
TIME_LIMIT_S = 3.0
STATEMENT = """
There are n items; item i weighs w_i and is worth v_i. Each item can be taken at most once.
Print the largest total worth of items whose total weight is at most W.

Input: the first line contains n and W; each of the next n lines contains w_i and v_i.
Output: one integer.
Constraints: 1 <= n <= 100, 1 <= W <= 10^4, 1 <= w_i <= 10^4, 1 <= v_i <= 10^6.
"""
PUBLIC = ["3 50\n30 60\n40 100\n45 120\n", "1 5\n6 10\n"]


def hidden(rng):
    def case(n, cap, wmax):
        return f"{n} {cap}\n" + "".join(f"{rng.randint(1, wmax)} {rng.randint(1, 10**6)}\n" for _ in range(n))
    tests = ["1 1\n1 7\n", "2 10\n5 10\n6 100\n", "1 10\n3 5\n", "3 6\n2 3\n2 3\n2 3\n", "2 4\n1 1\n4 3\n",
             case(10, 50, 20), case(30, 100, 15), case(60, 1000, 300), case(100, 10**4, 10**4)]
    return tests + [case(100, 10**4, 300)]


REF_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, cap = d[0], d[1]
best = [0] * (cap + 1)
for i in range(n):
    w, v = d[2 + 2 * i], d[3 + 2 * i]
    for c in range(cap, w - 1, -1):
        if best[c - w] + v > best[c]:
            best[c] = best[c - w] + v
print(best[cap])
'''
REF_CPP = r'''
#include <cstdio>
#include <vector>
int main() {
    int n, cap; scanf("%d %d", &n, &cap);
    std::vector<long long> best(cap + 1, 0);
    for (int i = 0; i < n; i++) {
        int w; long long v; scanf("%d %lld", &w, &v);
        for (int c = cap; c >= w; c--) if (best[c - w] + v > best[c]) best[c] = best[c - w] + v;
    }
    printf("%lld\n", best[cap]);
}
'''
WRONG_PY = r'''
import sys
d = list(map(int, sys.stdin.read().split()))
n, cap = d[0], d[1]
best = [0] * (cap + 1)
for i in range(n):
    w, v = d[2 + 2 * i], d[3 + 2 * i]
    for c in range(w, cap + 1):
        if best[c - w] + v > best[c]:
            best[c] = best[c - w] + v
print(best[cap])
'''
