"""torchvision.datasets that read local files (torchlike never downloads; see ``_vision.no_download``)."""

from ._cifar import CIFAR10, CIFAR100
from ._fakedata import FakeData
from ._folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, has_file_allowed_extension
from ._mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from ._svhn import SVHN
from ._vision import StandardTransform, VisionDataset

__all__ = [
    "CIFAR10", "CIFAR100", "EMNIST", "FakeData", "FashionMNIST", "ImageFolder", "DatasetFolder", "KMNIST", "MNIST",
    "SVHN", "VisionDataset", "StandardTransform", "IMG_EXTENSIONS", "default_loader", "has_file_allowed_extension",
]  # fmt: skip
