Anderson, Ann 1820 2 3 4; 420 388; board 1 1 1; p12 1 2 1
Brown, Bob 1750 1 5 6; 350 402; board 1 2 2; p12 2 1 2
Chen, Carol 1690 4 1 5; 377 411; board 2 1 3; p12 2 1 1
Diaz, Dan 1600 3 6 1; 390 365; board 2 3 1; p12 1 2 2
Evans, Eve 1555 6 2 3; 401 380; board 3 2 3; p12 1 2 2
Fox, Fay 1500 5 4 2; 366 399; board 3 3 2; p12 2 1 1
