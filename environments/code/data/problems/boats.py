TITLE = "Rescue Boats"
DIFFICULTY = "medium"
TAGS = ["greedy", "two pointers", "sorting"]
STATEMENT = """
n people with weights w_i wait for boats. A boat carries at most two people whose total weight
is at most C. What is the minimum number of boats?

Input: the first line contains n and C. The second line contains n integers w_i.
Output: one integer.
Constraints: 1 <= n <= 5000, 1 <= w_i <= C <= 10^6.
"""
PUBLIC = ["4 3\n3 2 2 1\n", "1 5\n4\n"]


def hidden(rng):
    def case(n, c):
        return f"{n} {c}\n{' '.join(str(rng.randint(1, c)) for _ in range(n))}\n"
    tests = ["1 1\n1\n", "2 10\n5 5\n", "2 10\n6 5\n", "4 5\n1 2 3 4\n", "5 10\n1 2 8 9 5\n",
             "6 6\n1 1 1 5 5 5\n", case(10, 10), case(100, 50), case(1000, 1000)]
    return tests + [case(5000, 10**6)]


REF_PY = r'''
n, c = map(int, input().split())
w = sorted(map(int, input().split()))
i, j, boats = 0, n - 1, 0
while i <= j:
    if i < j and w[i] + w[j] <= c:
        i += 1
    j -= 1
    boats += 1
print(boats)
'''
REF_CPP = r'''
#include <algorithm>
#include <cstdio>
#include <vector>
int main() {
    int n; long long c; scanf("%d %lld", &n, &c);
    std::vector<long long> w(n);
    for (auto& x : w) scanf("%lld", &x);
    std::sort(w.begin(), w.end());
    int i = 0, j = n - 1, boats = 0;
    while (i <= j) {
        if (i < j && w[i] + w[j] <= c) i++;
        j--; boats++;
    }
    printf("%d\n", boats);
}
'''
WRONG_PY = r'''
n, c = map(int, input().split())
w = sorted(map(int, input().split()))
i, boats = 0, 0
while i < n:
    if i + 1 < n and w[i] + w[i + 1] <= c:
        i += 2
    else:
        i += 1
    boats += 1
print(boats)
'''
