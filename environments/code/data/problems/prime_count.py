TITLE = "Primes in a Range"
DIFFICULTY = "easy"
TAGS = ["number theory"]
STATEMENT = """
For each query [l, r] print how many primes p satisfy l <= p <= r.

Input: the first line contains q; each of the next q lines contains l and r.
Output: q lines.
Constraints: 1 <= q <= 1000, 1 <= l <= r <= 10^6.
"""
PUBLIC = ["2\n2 10\n10 20\n", "1\n14 16\n"]


def hidden(rng):
    def rows(q):
        out = []
        for _ in range(q):
            l, r = sorted((rng.randint(1, 10**6), rng.randint(1, 10**6)))
            out.append(f"{l} {r}")
        return f"{q}\n" + "\n".join(out) + "\n"
    tests = ["1\n1 1\n", "1\n1 2\n", "1\n2 2\n", "1\n1 10\n", "1\n1 1000000\n", "1\n999983 999983\n",
             "2\n4 4\n1 3\n", rows(10), rows(100)]
    return tests + [rows(1000)]


REF_PY = r'''
import sys
N = 10**6 + 1
sieve = bytearray([1]) * N
sieve[0] = sieve[1] = 0
for i in range(2, int(N ** 0.5) + 1):
    if sieve[i]:
        sieve[i * i::i] = bytearray(len(range(i * i, N, i)))
pre = [0] * N
c = 0
for i in range(N):
    c += sieve[i]
    pre[i] = c
d = list(map(int, sys.stdin.read().split()))
print("\n".join(str(pre[d[2 + 2 * i]] - pre[d[1 + 2 * i] - 1]) for i in range(d[0])))
'''
REF_CPP = r'''
#include <cstdio>
#include <vector>
int main() {
    const int N = 1000001;
    std::vector<char> sieve(N, 1); sieve[0] = sieve[1] = 0;
    for (long long i = 2; i * i < N; i++) if (sieve[i]) for (long long j = i * i; j < N; j += i) sieve[j] = 0;
    std::vector<int> pre(N, 0);
    for (int i = 1; i < N; i++) pre[i] = pre[i - 1] + sieve[i];
    int q; scanf("%d", &q);
    while (q--) { int l, r; scanf("%d %d", &l, &r); printf("%d\n", pre[r] - pre[l - 1]); }
}
'''
WRONG_PY = r'''
import sys
N = 10**6 + 1
sieve = bytearray([1]) * N
sieve[0] = 0
for i in range(2, int(N ** 0.5) + 1):
    if sieve[i]:
        sieve[i * i::i] = bytearray(len(range(i * i, N, i)))
pre = [0] * N
c = 0
for i in range(N):
    c += sieve[i]
    pre[i] = c
d = list(map(int, sys.stdin.read().split()))
print("\n".join(str(pre[d[2 + 2 * i]] - pre[d[1 + 2 * i] - 1]) for i in range(d[0])))
'''
