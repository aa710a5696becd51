"""torchvision.datasets.mnist."""

from ._mnist import (
    EMNIST,
    KMNIST,
    MNIST,
    FashionMNIST,
    read_image_file,
    read_label_file,
    read_sn3_pascalvincent_tensor,
)

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "read_image_file", "read_label_file", "read_sn3_pascalvincent_tensor"]  # fmt: skip
