"""How a style check ends: its summary line, then each problem, and the exit
status the test reports (1 on any problem, or when it checked nothing at all,
which means it looked in the wrong place)."""


def report(summary, problems, checked, nothing_checked):
    """Prints `summary` and `problems`, one a line; returns the exit status:
    1 with any problem, or when `checked` is 0 (printing `nothing_checked`,
    the likely cause), else 0."""
    print(summary)
    for problem in problems:
        print(problem)
    if checked == 0:
        print(nothing_checked)
        return 1
    return 1 if problems else 0
