TITLE = "Jumping Stones"
DIFFICULTY = "medium"
TAGS = ["greedy"]
STATEMENT = """
Stones are numbered 1..n. From stone i you may jump forward to any stone i+1 .. i+a_i. Starting
on stone 1, what is the minimum number of jumps to reach stone n? Print -1 if it cannot be
reached.

Input: the first line contains n. The second line contains n integers a_1 .. a_n.
Output: one integer.
Constraints: 1 <= n <= 10^4, 0 <= a_i <= 10^4.
"""
PUBLIC = ["5\n2 3 1 1 4\n", "4\n1 1 1 1\n"]


def hidden(rng):
    def case(n, hi, zero_p=0.0):
        return f"{n}\n{' '.join(str(0 if rng.random() < zero_p else rng.randint(1, hi)) for _ in range(n))}\n"
    tests = ["1\n0\n", "2\n0 5\n", "3\n1 0 2\n", "5\n3 2 1 0 4\n", "2\n10 0\n", "6\n5 0 0 0 0 0\n",
             case(10, 3), case(100, 4, 0.3), case(1000, 2, 0.5), case(1000, 20, 0.2)]
    return tests + [case(10**4, 3), case(10**4, 10, 0.4)]


REF_PY = r'''
n = int(input())
a = list(map(int, input().split()))
jumps, reach, end = 0, 0, 0
ok = True
for i in range(n - 1):
    if i > reach:
        ok = False
        break
    reach = max(reach, i + a[i])
    if i == end:
        jumps += 1
        end = reach
if n > 1 and end < n - 1:
    ok = False
print(jumps if ok else -1)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n; scanf("%d", &n);
    std::vector<int> a(n);
    for (auto& x : a) scanf("%d", &x);
    int jumps = 0, reach = 0, end = 0; bool ok = true;
    for (int i = 0; i < n - 1; i++) {
        if (i > reach) { ok = false; break; }
        reach = std::max(reach, i + a[i]);
        if (i == end) { jumps++; end = reach; }
    }
    if (n > 1 && end < n - 1) ok = false;
    printf("%d\n", ok ? jumps : -1);
}
'''
WRONG_PY = r'''
n = int(input())
a = list(map(int, input().split()))
jumps, reach, end = 0, 0, 0
for i in range(n - 1):
    reach = max(reach, i + a[i])
    if i == end:
        jumps += 1
        end = reach
print(jumps)
'''
