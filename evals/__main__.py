"""``python -m evals [SUITE ...] [--out DIR] [--quick] [--locomo PATH] [--model M]``."""

from .harness import eval_command

if __name__ == "__main__":
    eval_command(prog_name="python -m evals")
