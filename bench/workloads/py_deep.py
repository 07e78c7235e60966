# A Python workload whose native stack is deep: a recursive walk through C
# builtins (sum, map), so each level of the recursion is a C call back into
# the interpreter's eval loop (Python 3.11+ runs Python-to-Python calls
# without recursing in C; calls from C still do). `extra` more levels of
# such recursion sit below the walk (bench/kernel_stack_size.sh).
#   python3 py_deep.py [extra] [walks]
import sys

extra = int(sys.argv[1]) if len(sys.argv) > 1 else 0
walks = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def build(depth):
    return [build(depth - 1), build(depth - 1)] if depth else []


def size(tree):
    return 1 + sum(map(size, tree))


def chain(n, tree):
    return sum(map(lambda _: chain(n - 1, tree), [0])) if n else size(tree)


tree = build(14 if extra == 0 else 8)
print(sum(chain(extra, tree) for _ in range(walks)))
