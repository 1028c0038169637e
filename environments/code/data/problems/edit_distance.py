TITLE = "Edit Distance"
DIFFICULTY = "medium"
TAGS = ["dp", "strings"]
TIME_LIMIT_S = 5.0
STATEMENT = """
Print the minimum number of single-character insertions, deletions and substitutions that
turn string a into string b.

Input: two lines with a and b (lowercase letters).
Output: one integer.
Constraints: 1 <= |a|, |b| <= 1000.
"""
PUBLIC = ["abc\nabxc\n", "kitten\nkitte\n"]


def hidden(rng):
    def word(n, alpha="abcde"):
        return "".join(rng.choice(alpha) for _ in range(n))
    tests = ["a\nb\n", "abc\nabd\n", "a\na\n", "horse\nros\n", "intention\nexecution\n", "ab\nba\n",
             f"{word(30)}\n{word(25)}\n", f"{word(200, 'ab')}\n{word(180, 'ab')}\n",
             f"{word(500)}\n{word(500)}\n"]
    return tests + [f"{word(1000, 'abcdefghij')}\n{word(1000, 'abcdefghij')}\n"]


REF_PY = r'''
a = input().strip()
b = input().strip()
prev = list(range(len(b) + 1))
for i, ca in enumerate(a, 1):
    cur = [i] + [0] * len(b)
    for j, cb in enumerate(b, 1):
        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
    prev = cur
print(prev[-1])
'''
REF_CPP = r'''
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
int main() {
    std::string a, b; std::cin >> a >> b;
    std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) prev[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); j++)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
        std::swap(prev, cur);
    }
    std::cout << prev[b.size()] << "\n";
}
'''
WRONG_PY = r'''
a = input().strip()
b = input().strip()
prev = [0] * (len(b) + 1)
for ca in a:
    cur = [0] * (len(b) + 1)
    for j, cb in enumerate(b, 1):
        cur[j] = prev[j - 1] + 1 if ca == cb else max(prev[j], cur[j - 1])
    prev = cur
print(len(a) + len(b) - 2 * prev[-1])
'''
