"""What the other packages of contextwise use of token counting beyond its public names."""

from contextwise.counting._tokens import check_count

__all__ = ["check_count"]
