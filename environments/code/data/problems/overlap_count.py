TITLE = "Count Occurrences"
DIFFICULTY = "medium"
TAGS = ["strings"]
STATEMENT = """
Count the positions where pattern p occurs in text s. Occurrences may overlap.

Input: two lines: s, then p (lowercase letters).
Output: one integer.
Constraints: 1 <= |p| <= |s| <= 2*10^4.
"""
PUBLIC = ["abcabcab\nabc\n", "hello\nxyz\n"]


def hidden(rng):
    def word(n, alpha):
        return "".join(rng.choice(alpha) for _ in range(n))
    tests = ["aaaa\naa\n", "a\na\n", "abababa\naba\n", "aaaaa\naaaaa\n", "ab\nb\n",
             f"{word(100, 'ab')}\nab\n", f"{word(1000, 'ab')}\naba\n", f"{word(5000, 'abc')}\nabca\n", "a" * 20000 + "\n" + "a" * 100 + "\n"]
    return tests + [f"{word(20000, 'ab')}\n{word(6, 'ab')}\n"]


REF_PY = r'''
s = input().strip()
p = input().strip()
t = p + "#" + s
pi = [0] * len(t)
count = 0
for i in range(1, len(t)):
    k = pi[i - 1]
    while k and t[i] != t[k]:
        k = pi[k - 1]
    if t[i] == t[k]:
        k += 1
    pi[i] = k
    count += k == len(p)
print(count)
'''
REF_CPP = r'''
#include <iostream>
#include <string>
#include <vector>
int main() {
    std::string s, p; std::cin >> s >> p;
    std::string t = p + "#" + s; std::vector<int> pi(t.size(), 0); long long count = 0;
    for (size_t i = 1; i < t.size(); i++) {
        int k = pi[i - 1];
        while (k && t[i] != t[k]) k = pi[k - 1];
        if (t[i] == t[k]) k++;
        pi[i] = k; count += k == (int)p.size();
    }
    std::cout << count << "\n";
}
'''
WRONG_PY = r'''
s = input().strip()
p = input().strip()
print(s.count(p))
'''
