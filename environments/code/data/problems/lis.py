TITLE = "Longest Rising Sequence"
DIFFICULTY = "medium"
TAGS = ["dp", "binary search"]
STATEMENT = """
Find the length of the longest strictly increasing subsequence of a_1 .. a_n.

Input: the first line contains n; the second line contains the array.
Output: one integer.
Constraints: 1 <= n <= 5000, -10^6 <= a_i <= 10^6.
"""
PUBLIC = ["8\n10 9 2 5 3 7 101 18\n", "1\n4\n"]


def hidden(rng):
    def case(n, lo, hi):
        return f"{n}\n{' '.join(str(rng.randint(lo, hi)) for _ in range(n))}\n"
    tests = ["3\n7 7 7\n", "4\n1 2 2 3\n", "5\n5 4 3 2 1\n", "6\n1 3 3 3 2 4\n", "2\n-1 -1\n",
             case(10, 0, 3), case(100, 0, 10), case(1000, -100, 100), case(2000, -10**6, 10**6)]
    return tests + [case(5000, 0, 50)]


REF_PY = r'''
from bisect import bisect_left
n = int(input())
tails = []
for x in map(int, input().split()):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n; scanf("%d", &n); std::vector<int> tails;
    for (int i = 0; i < n; i++) {
        int x; scanf("%d", &x);
        auto it = std::lower_bound(tails.begin(), tails.end(), x);
        if (it == tails.end()) tails.push_back(x); else *it = x;
    }
    printf("%d\n", (int)tails.size());
}
'''
WRONG_PY = r'''
from bisect import bisect_right
n = int(input())
tails = []
for x in map(int, input().split()):
    i = bisect_right(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
'''
