TITLE = "Longest Distinct Substring"
DIFFICULTY = "medium"
TAGS = ["two pointers", "strings"]
STATEMENT = """
Find the length of the longest substring of s in which no character repeats.

Input: one line with the string s of lowercase letters.
Output: one integer.
Constraints: 1 <= |s| <= 10^5.
"""
PUBLIC = ["abcabcbb\n", "bbbbb\n"]


def hidden(rng):
    def word(n, alpha):
        return "".join(rng.choice(alpha) for _ in range(n)) + "\n"
    tests = ["a\n", "abba\n", "abcdefghijklmnopqrstuvwxyz\n", "tmmzuxt\n", "dvdf\n", "abcbdaef\n",
             word(20, "abc"), word(200, "abcdefgh"), word(1000, "abcdefghijklmnopqrstuvwxyz"),
             "abcdefghij" * 100 + "\n"]
    return tests + [word(10**5, "abcdefghijklmnopqrstuvwxyz")]


REF_PY = r'''
s = input().strip()
last = {}
lo = best = 0
for i, c in enumerate(s):
    if c in last and last[c] >= lo:
        lo = last[c] + 1
    last[c] = i
    best = max(best, i - lo + 1)
print(best)
'''
REF_CPP = r'''
#include <algorithm>
#include <iostream>
#include <string>
int main() {
    std::string s; std::cin >> s;
    int last[26]; std::fill(last, last + 26, -1);
    int lo = 0, best = 0;
    for (int i = 0; i < (int)s.size(); i++) {
        int c = s[i] - 'a';
        if (last[c] >= lo) lo = last[c] + 1;
        last[c] = i;
        best = std::max(best, i - lo + 1);
    }
    std::cout << best << "\n";
}
'''
WRONG_PY = r'''
s = input().strip()
last = {}
lo = best = 0
for i, c in enumerate(s):
    if c in last:
        lo = last[c] + 1
    last[c] = i
    best = max(best, i - lo + 1)
print(best)
'''
