"""A panel's frame at random: what a driver is given to draw."""

import random

from PIL import Image


def random_frame(seed):
    rng = random.Random(seed)
    image = Image.new("1", (128, 64))
    for _ in range(1500):
        image.putpixel((rng.randrange(128), rng.randrange(64)), 1)
    return image
