# Division C: the sample event's second division

Núñez, José            1846.5 2 3 5; 402 388; board 1 2 1; class A; newr 1850 1847; p12 1 2 3; rtime 1676683776 1676687732
Østergaard, Åse        1790 1 4 00; 380 410; board 1 1; class A; newr 1788 1795; p12 2 1
Lefèvre, Chloé         1702 4 1 4; 355 377; board 2 2 2; class B; note late\; phoned ahead; p12 1 1 2; newr 1700 1701
Smith, Jo              1650 3 2 3; 390 312; board 2 1 2; class B; p12 2 2 1
Brown-Ng, Al           1500 0 0 1; 50 -50; board 0 0 1; class B; p12 0 0 3
Withers, Vi            1400 0 0 0; -50 -50; off -50; class B
