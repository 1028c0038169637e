TITLE = "Anagram Groups"
DIFFICULTY = "easy"
TAGS = ["strings", "hashing", "sorting"]
STATEMENT = """
Two words are anagrams if one is a rearrangement of the letters of the other (every letter
used the same number of times). Into how many groups of mutual anagrams do n words fall?

Input: the first line contains n; each of the next n lines contains a word.
Output: one integer.
Constraints: 1 <= n <= 3000, words have 1 to 10 lowercase letters.
"""
PUBLIC = ["5\nlisten\nsilent\nenlist\ngoogle\ngogole\n", "2\nab\ncd\n"]


def hidden(rng):
    def words(n, alpha, maxlen):
        return f"{n}\n" + "".join("".join(rng.choice(alpha) for _ in range(rng.randint(1, maxlen))) + "\n" for _ in range(n))
    tests = ["1\na\n", "2\naab\nabb\n", "3\nab\nba\nab\n", "2\naabb\nab\n", "3\nabc\ncab\nabcc\n",
             words(10, "ab", 4), words(100, "abc", 5), words(1000, "ab", 6), words(2000, "abcdefghij", 10)]
    return tests + [words(3000, "abcd", 8)]


REF_PY = r'''
import sys
d = sys.stdin.read().split()
print(len({"".join(sorted(w)) for w in d[1:1 + int(d[0])]}))
'''
REF_CPP = r'''
#include <algorithm>
#include <iostream>
#include <set>
#include <string>
int main() {
    int n; std::cin >> n; std::set<std::string> groups;
    for (int i = 0; i < n; i++) { std::string w; std::cin >> w; std::sort(w.begin(), w.end()); groups.insert(w); }
    std::cout << groups.size() << "\n";
}
'''
WRONG_PY = r'''
import sys
d = sys.stdin.read().split()
print(len({frozenset(w) for w in d[1:1 + int(d[0])]}))
'''
