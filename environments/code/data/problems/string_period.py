TITLE = "Shortest Repeating Unit"
DIFFICULTY = "medium-hard"
TAGS = ["strings", "prefix function"]
STATEMENT = """
Find the length of the shortest string u such that s is u repeated a whole number of times
(u = s itself counts, so the answer exists).

Input: one line with s (lowercase letters).
Output: one integer.
Constraints: 1 <= |s| <= 2*10^4.
"""
PUBLIC = ["abababab\n", "abcd\n"]


def hidden(rng):
    def rep(unit_len, times, alpha="ab"):
        return "".join(rng.choice(alpha) for _ in range(unit_len)) * times + "\n"
    tests = ["a\n", "aaaa\n", "abaab\n", "abcab\n", "aabaab\n", "abcabcab\n", "ababa\n", rep(5, 7),
             rep(3, 1000) + "", "ab" * 4999 + "a\n"]
    return tests + [rep(100, 200, "abc")]


REF_PY = r'''
s = input().strip()
n = len(s)
pi = [0] * n
for i in range(1, n):
    k = pi[i - 1]
    while k and s[i] != s[k]:
        k = pi[k - 1]
    if s[i] == s[k]:
        k += 1
    pi[i] = k
p = n - pi[-1]
print(p if n % p == 0 else n)
'''
REF_CPP = r'''
#include <iostream>
#include <string>
#include <vector>
int main() {
    std::string s; std::cin >> s; int n = s.size(); std::vector<int> pi(n, 0);
    for (int i = 1; i < n; i++) {
        int k = pi[i - 1];
        while (k && s[i] != s[k]) k = pi[k - 1];
        if (s[i] == s[k]) k++;
        pi[i] = k;
    }
    int p = n - pi[n - 1];
    std::cout << (n % p == 0 ? p : n) << "\n";
}
'''
WRONG_PY = r'''
s = input().strip()
n = len(s)
pi = [0] * n
for i in range(1, n):
    k = pi[i - 1]
    while k and s[i] != s[k]:
        k = pi[k - 1]
    if s[i] == s[k]:
        k += 1
    pi[i] = k
print(n - pi[-1])
'''
