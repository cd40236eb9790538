Garcia, Gil 1400 2 3 4; 350 371; board 4 4 4; p12 2 1 2
Hill, Hana 1380 1 0 5; 362 -50; board 4 0 5; p12 1 0 2
Ito, Ken 1300 4 1 0; 340 300; board 5 4 0; p12 1 2 0
Jones, Jo 1250 3 5 1; 301 333; board 5 5 4; p12 2 1 1
Khan, Kai 1200 0 4 2; 50 310; board 0 5 5; p12 0 2 1
