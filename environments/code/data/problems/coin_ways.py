TITLE = "Ways to Pay"
DIFFICULTY = "medium"
TAGS = ["dp"]
STATEMENT = """
With unlimited coins of k distinct values c_1 .. c_k, in how many ways can you pay exactly S?
Two ways differ if some coin value is used a different number of times (order does not
matter). Print the answer modulo 1000000007.

Input: the first line contains k and S; the second line contains the coin values.
Output: one integer.
Constraints: 1 <= k <= 100, 1 <= S <= 10^4, 1 <= c_i <= 10^4.
"""
PUBLIC = ["2 2\n1 2\n", "1 10\n5\n"]


def hidden(rng):
    def case(k, s, cmax):
        coins = rng.sample(range(1, cmax + 1), k)
        return f"{k} {s}\n{' '.join(map(str, coins))}\n"
    tests = ["1 3\n2\n", "2 7\n2 3\n", "3 5\n1 2 5\n", "2 3\n1 2\n", "3 4\n1 2 3\n", case(3, 20, 10),
             case(5, 100, 30), case(20, 1000, 100), case(50, 5000, 500)]
    return tests + [case(100, 10**4, 10**4), case(100, 10**4, 200)]


REF_PY = r'''
k, s = map(int, input().split())
MOD = 10**9 + 7
ways = [1] + [0] * s
for c in map(int, input().split()):
    for x in range(c, s + 1):
        ways[x] = (ways[x] + ways[x - c]) % MOD
print(ways[s])
'''
REF_CPP = r'''
#include <cstdio>
#include <vector>
int main() {
    int k, s; scanf("%d %d", &k, &s);
    const long long MOD = 1000000007;
    std::vector<long long> ways(s + 1, 0); ways[0] = 1;
    for (int i = 0; i < k; i++) {
        int c; scanf("%d", &c);
        for (int x = c; x <= s; x++) ways[x] = (ways[x] + ways[x - c]) % MOD;
    }
    printf("%lld\n", ways[s]);
}
'''
WRONG_PY = r'''
k, s = map(int, input().split())
MOD = 10**9 + 7
coins = list(map(int, input().split()))
ways = [1] + [0] * s
for x in range(1, s + 1):
    for c in coins:
        if c <= x:
            ways[x] = (ways[x] + ways[x - c]) % MOD
print(ways[s])
'''
